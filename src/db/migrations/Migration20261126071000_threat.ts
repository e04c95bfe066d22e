import { Migration } from '@mikro-orm/migrations';

/**
 * Threat detection: every sign-in attempt that reaches the password check leaves a scored row (its
 * signals are read from the earlier rows of the same workspace, by IP and by account), and each
 * workspace may change the score at which a sign-in is blocked (no row: the defaults).
 */
export class Migration20261126071000_threat extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table risk_scores (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text null,
        email text not null,
        ip text null,
        user_agent text null,
        score int not null check (score between 0 and 100),
        reasons jsonb not null,
        outcome text not null check (outcome in ('allowed', 'blocked', 'failure')),
        failure_reason text null,
        locked_account boolean not null,
        threshold int not null,
        created_at timestamptz not null
      );
      create index risk_scores_recent_index on risk_scores (workspace_id, created_at desc, id desc);
      create index risk_scores_ip_index on risk_scores (workspace_id, ip, created_at desc);
      create index risk_scores_email_index on risk_scores (workspace_id, email, created_at desc);

      create table threat_settings (
        workspace_id text primary key references workspaces(id) on delete cascade deferrable initially deferred,
        block_threshold int not null check (block_threshold between 1 and 100),
        blocking_enabled boolean not null,
        updated_at timestamptz not null
      );
    `);
  }
}
