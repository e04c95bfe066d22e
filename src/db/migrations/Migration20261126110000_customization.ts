import { Migration } from '@mikro-orm/migrations';

/**
 * Customization (issue 9): a workspace's branding (one row, absent until first set), its custom
 * domains with their DNS verification, and its own versions of the email templates (absent means the
 * built-in one). A verified domain belongs to one workspace only (partial unique index); pending and
 * failed claims may coexist, so nobody can block a domain's real owner by adding it first.
 */
export class Migration20261126110000_customization extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table branding (
        workspace_id text primary key references workspaces(id) on delete cascade deferrable initially deferred,
        name text null,
        logo_url text null,
        primary_color text null,
        background_color text null,
        support_email text null,
        updated_at timestamptz not null
      );

      create table custom_domains (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        domain text not null,
        status text not null check (status in ('pending', 'verified', 'failed')),
        verification_token text not null,
        failure_reason text null,
        checked_at timestamptz null,
        verified_at timestamptz null,
        created_at timestamptz not null,
        constraint custom_domains_workspace_id_domain_unique unique (workspace_id, domain)
      );
      create unique index custom_domains_verified_domain_unique on custom_domains (domain) where status = 'verified';

      create table email_templates (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        key text not null,
        subject text not null,
        html_body text not null,
        text_body text not null,
        updated_at timestamptz not null,
        constraint email_templates_workspace_id_key_unique unique (workspace_id, key)
      );
    `);
  }
}
