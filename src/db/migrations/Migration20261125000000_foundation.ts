import { Migration } from '@mikro-orm/migrations';

/**
 * Workspaces, users, API keys, roles and the audit trail. Foreign keys are deferred to commit: the
 * entities hold plain id columns, so the unit of work does not order inserts by them.
 */
export class Migration20261125000000_foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table workspaces (
        id text primary key,
        name text not null,
        created_at timestamptz not null
      );

      create table users (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        email text not null,
        name text null,
        status text not null check (status in ('active', 'deactivated', 'locked')),
        password_hash text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_sign_in_at timestamptz null,
        constraint users_workspace_id_email_unique unique (workspace_id, email)
      );
      create index users_workspace_id_id_index on users (workspace_id, id);

      create table api_keys (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        prefix text not null,
        key_hash text not null,
        created_at timestamptz not null,
        revoked_at timestamptz null,
        constraint api_keys_key_hash_unique unique (key_hash)
      );
      create index api_keys_workspace_id_index on api_keys (workspace_id);

      create table roles (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        key text not null,
        name text not null,
        description text null,
        builtin boolean not null,
        permissions jsonb not null,
        created_at timestamptz not null,
        constraint roles_workspace_id_key_unique unique (workspace_id, key)
      );

      create table role_assignments (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        role_id text not null references roles(id) on delete cascade deferrable initially deferred,
        expires_at timestamptz null,
        created_at timestamptz not null,
        constraint role_assignments_user_id_role_id_unique unique (user_id, role_id)
      );
      create index role_assignments_workspace_id_index on role_assignments (workspace_id);

      create table audit_events (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        event_type text not null,
        outcome text not null check (outcome in ('success', 'failure')),
        actor_type text not null,
        actor_id text null,
        target_type text null,
        target_id text null,
        ip text null,
        user_agent text null,
        request_id text null,
        details jsonb not null,
        created_at timestamptz not null
      );
      create index audit_events_workspace_id_id_index on audit_events (workspace_id, id);
    `);
  }
}
