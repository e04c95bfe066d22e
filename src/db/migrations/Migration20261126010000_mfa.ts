import { Migration } from '@mikro-orm/migrations';

/** TOTP factors, sign-in challenges, and the last TOTP step each user spent (the replay guard). */
export class Migration20261126010000_mfa extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table users add column mfa_last_step bigint null;

      create table mfa_factors (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        name text not null,
        kind text not null check (kind in ('totp')),
        status text not null check (status in ('Pending verification', 'Verified')),
        secret text not null,
        created_at timestamptz not null,
        verified_at timestamptz null
      );
      create index mfa_factors_user_id_index on mfa_factors (user_id);

      create table mfa_challenges (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        token_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        used_at timestamptz null,
        constraint mfa_challenges_token_hash_unique unique (token_hash)
      );
    `);
  }
}
