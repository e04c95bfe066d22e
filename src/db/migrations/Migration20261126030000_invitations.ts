import { Migration } from '@mikro-orm/migrations';

/** Invitations: one pending invitation per address and workspace; the token stored as SHA-256. */
export class Migration20261126030000_invitations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table invitations (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        email text not null,
        role_id text not null references roles(id) on delete cascade deferrable initially deferred,
        status text not null check (status in ('pending', 'accepted', 'revoked', 'expired')),
        token_hash text not null,
        created_at timestamptz not null,
        expires_at timestamptz not null,
        last_sent_at timestamptz not null,
        accepted_at timestamptz null,
        user_id text null references users(id) on delete set null deferrable initially deferred,
        constraint invitations_token_hash_unique unique (token_hash)
      );
      create unique index invitations_one_pending on invitations (workspace_id, email) where status = 'pending';
      create index invitations_workspace_id_id_index on invitations (workspace_id, id);
    `);
  }
}
