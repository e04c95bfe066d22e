import { Migration } from '@mikro-orm/migrations';

/**
 * The external identities a user signs in with: a social or generic OpenID provider's subject (its
 * issuer and `sub`), linked to the account it created or was linked to. A returning user is found by
 * that subject first, not by email, so a provider that does not mark the email verified still signs
 * its own account in, and an email change at the provider keeps the account.
 */
export class Migration20261128000000_user_identities extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table user_identities (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        user_id text not null references users(id) on delete cascade deferrable initially deferred,
        provider text not null,
        issuer text not null,
        subject text not null,
        created_at timestamptz not null,
        constraint user_identities_workspace_id_issuer_subject_unique unique (workspace_id, issuer, subject)
      );
      create index user_identities_user_id_index on user_identities (user_id);
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table user_identities;');
  }
}
