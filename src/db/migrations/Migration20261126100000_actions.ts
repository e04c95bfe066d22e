import { Migration } from '@mikro-orm/migrations';

/**
 * Actions (code hooks run in a sandbox during sign-in), and the custom claims they add: kept on the
 * challenge while a second factor is awaited, and on the session so refreshed access tokens carry
 * them too.
 */
export class Migration20261126100000_actions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table actions (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        trigger text not null check (trigger in ('post-login')),
        code text not null,
        status text not null check (status in ('draft', 'deployed')),
        deployed_code text null,
        deployed_version integer null,
        deployed_at timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index actions_workspace_id_id_index on actions (workspace_id, id);
      create unique index actions_workspace_id_name_unique on actions (workspace_id, lower(name));
      -- What every sign-in asks (the deployed actions of a trigger): a workspace without any answers from the index alone.
      create index actions_live_index on actions (workspace_id, trigger, id) where deployed_code is not null;

      alter table mfa_challenges add column claims jsonb null;
      alter table sessions add column claims jsonb null;
    `);
  }
}
