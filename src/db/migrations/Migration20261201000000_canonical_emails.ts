import { Migration } from '@mikro-orm/migrations';
import { canonicalEmail } from '../../core/addresses.ts';

/**
 * Users' emails in their canonical form (core/addresses.ts). Addresses the API took were already in
 * it; social, OIDC and SAML sign-ins stored the provider's address only lower-cased, so an
 * internationalised domain in Unicode, white space or a trailing dot could be kept as given. Such a
 * row is rewritten unless another user of its workspace already holds the canonical address (that
 * account is the one every form of the address names; the other keeps signing in by its provider's
 * subject).
 */
export class Migration20261201000000_canonical_emails extends Migration {
  override async up(): Promise<void> {
    const rows = await this.execute(
      `select id, workspace_id, email from users where email !~ '^[\\x21-\\x7e]*$' or email like '%.' order by created_at, id`,
    );
    for (const row of rows) {
      const email = String(row.email);
      const canonical = canonicalEmail(email);
      if (canonical === email) continue;
      await this.execute(
        `update users set email = ? where id = ? and not exists (select 1 from users other where other.workspace_id = ? and other.email = ?)`,
        [canonical, row.id, row.workspace_id, canonical],
      );
    }
  }

  override async down(): Promise<void> {
    // The forms rewritten were equivalent spellings of the same address; there is nothing to restore.
  }
}
