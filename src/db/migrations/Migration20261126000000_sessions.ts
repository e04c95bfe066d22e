import { Migration } from '@mikro-orm/migrations';

/** Sign-in: signing keys, sessions with rotating refresh tokens, reset tokens, the mail outbox, lockout. */
export class Migration20261126000000_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table users
        add column failed_login_count integer not null default 0,
        add column locked_until timestamptz null;

      create table signing_keys (
        id text primary key,
        alg text not null,
        public_jwk jsonb not null,
        private_jwk text not null,
        created_at timestamptz not null,
        retired_at timestamptz null
      );

      create table sessions (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        created_at timestamptz not null,
        last_refreshed_at timestamptz null,
        expires_at timestamptz not null,
        ended_at timestamptz null,
        end_reason text null,
        ip text null,
        user_agent text null
      );
      create index sessions_user_id_index on sessions (user_id, created_at);

      create table refresh_tokens (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        session_id text not null references sessions(id) on delete cascade deferrable initially deferred,
        token_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        constraint refresh_tokens_token_hash_unique unique (token_hash)
      );
      create index refresh_tokens_session_id_index on refresh_tokens (session_id);

      create table password_reset_tokens (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        token_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        constraint password_reset_tokens_token_hash_unique unique (token_hash)
      );
      create index password_reset_tokens_user_id_index on password_reset_tokens (user_id, created_at);

      create table email_outbox (
        id text primary key,
        workspace_id text null references workspaces(id) on delete cascade deferrable initially deferred,
        template text not null,
        to_address text not null,
        subject text not null,
        text_body text not null,
        html_body text null,
        status text not null check (status in ('pending', 'sent', 'failed')),
        attempts integer not null default 0,
        last_error text null,
        created_at timestamptz not null,
        next_attempt_at timestamptz not null,
        sent_at timestamptz null
      );
      create index email_outbox_pending_index on email_outbox (next_attempt_at) where status = 'pending';
    `);
  }
}
