import { Migration } from '@mikro-orm/migrations';

/**
 * Applications (OAuth clients of a workspace) and the authorization server's storage: codes, tokens,
 * grants, sessions and interactions of oidc-provider, one row per artifact, in PostgreSQL so every
 * instance sees the same ones. Client secrets are stored as SHA-256 digests.
 */
export class Migration20261126060000_applications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table applications (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        name text not null,
        type text not null check (type in ('web', 'spa', 'native', 'm2m')),
        redirect_uris jsonb not null default '[]'::jsonb,
        secret_hash text null,
        secret_prefix text null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        secret_rotated_at timestamptz null,
        constraint applications_secret_by_type check ((type in ('web', 'm2m')) = (secret_hash is not null))
      );
      create index applications_workspace_id_id_index on applications (workspace_id, id);

      create table oidc_payloads (
        kind text not null,
        id text not null,
        payload jsonb not null,
        grant_id text null,
        user_code text null,
        uid text null,
        client_id text null,
        expires_at timestamptz null,
        consumed_at timestamptz null,
        primary key (kind, id)
      );
      create index oidc_payloads_grant_id_index on oidc_payloads (grant_id) where grant_id is not null;
      create index oidc_payloads_uid_index on oidc_payloads (uid) where uid is not null;
      create index oidc_payloads_user_code_index on oidc_payloads (user_code) where user_code is not null;
      create index oidc_payloads_client_id_index on oidc_payloads (client_id) where client_id is not null;
      create index oidc_payloads_expires_at_index on oidc_payloads (expires_at) where expires_at is not null;
    `);
  }
}
