import { Migration } from '@mikro-orm/migrations';

/**
 * The account each OAuth artifact (grant, token, code, hosted sign-in session) belongs to, indexed, so
 * that ending a user's sessions (password change or reset, revoke-all, deactivation, deletion) ends
 * their OAuth grants too, by one delete.
 */
export class Migration20261127010000_oidc_account extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table oidc_payloads add column account_id text;
      update oidc_payloads set account_id = payload->>'accountId' where payload->>'accountId' is not null;
      create index oidc_payloads_account_id_index on oidc_payloads (account_id) where account_id is not null;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop index oidc_payloads_account_id_index;
      alter table oidc_payloads drop column account_id;
    `);
  }
}
