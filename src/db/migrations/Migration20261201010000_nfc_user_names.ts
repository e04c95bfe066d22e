import { Migration } from '@mikro-orm/migrations';

/** Users' names in Unicode NFC, the form names are now kept and searched in (users/names.ts). */
export class Migration20261201010000_nfc_user_names extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update users set name = normalize(name, NFC) where name is not null and name is not nfc normalized;`);
  }

  override async down(): Promise<void> {
    // NFC is a spelling of the same text; there is nothing to restore.
  }
}
