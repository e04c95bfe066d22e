import { Migration } from '@mikro-orm/migrations';

/**
 * Organizations (a customer company inside a workspace) with their email domains, members and SSO
 * connection; identity-provider attributes; social providers; and the short-lived state of sign-ins
 * through an external identity provider (social or SSO).
 */
export class Migration20261126090000_organizations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table organizations (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        sso jsonb not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index organizations_workspace_id_id_index on organizations (workspace_id, id);

      create table organization_domains (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        organization_id text not null references organizations(id) on delete cascade deferrable initially deferred,
        domain text not null,
        constraint organization_domains_workspace_id_domain_unique unique (workspace_id, domain)
      );
      create index organization_domains_organization_id_index on organization_domains (organization_id);

      create table organization_members (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        organization_id text not null references organizations(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        created_at timestamptz not null,
        constraint organization_members_organization_id_user_id_unique unique (organization_id, user_id)
      );
      create index organization_members_user_id_index on organization_members (user_id);

      create table sso_connections (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        organization_id text not null unique references organizations(id) on delete cascade deferrable initially deferred,
        kind text not null check (kind in ('oidc', 'saml')),
        config jsonb not null,
        secret_sealed text null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );

      create table portal_links (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        organization_id text not null references organizations(id) on delete cascade deferrable initially deferred,
        token_hash text not null unique,
        expires_at timestamptz not null,
        used_at timestamptz null,
        session_hash text null unique,
        session_expires_at timestamptz null,
        created_at timestamptz not null
      );

      create table idp_attributes (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        key text not null,
        name text not null,
        claim text null,
        builtin boolean not null,
        enabled boolean not null,
        created_at timestamptz not null,
        constraint idp_attributes_workspace_id_key_unique unique (workspace_id, key)
      );

      create table social_providers (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        provider text not null,
        config jsonb not null,
        secret_sealed text not null,
        enabled boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        constraint social_providers_workspace_id_provider_unique unique (workspace_id, provider)
      );

      create table external_sign_ins (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        kind text not null check (kind in ('social', 'sso')),
        source text not null,
        state_hash text not null unique,
        flow_sealed text not null,
        redirect_uri text not null,
        expires_at timestamptz not null,
        called_back_at timestamptz null,
        user_id text null references users(id) on delete cascade deferrable initially deferred,
        code_hash text null unique,
        code_expires_at timestamptz null,
        exchanged_at timestamptz null,
        created_at timestamptz not null
      );
    `);
  }
}
