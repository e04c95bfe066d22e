import { Migration } from '@mikro-orm/migrations';

/**
 * Built-in roles are named by the CONTRACT's identifiers (`owner`, `admin`, `viewer`, `member`), the
 * same as their keys; they were created with capitalised display names.
 */
export class Migration20261126140000_builtin_role_names extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update roles set name = key where builtin and key in ('owner', 'admin', 'viewer', 'member')`);
  }

  override async down(): Promise<void> {
    this.addSql(`update roles set name = initcap(key) where builtin and key in ('owner', 'admin', 'viewer', 'member')`);
  }
}
