import { Migration } from '@mikro-orm/migrations';

/**
 * Time-bound role assignments by their end, for the lapse round every instance runs each second
 * (roles/lapses.ts): without it each round read the whole table. Partial: most assignments have no
 * end and are never due.
 */
export class Migration20261205000000_role_assignment_lapse_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index role_assignments_expires_at_index on role_assignments (expires_at) where expires_at is not null;');
  }

  override async down(): Promise<void> {
    this.addSql('drop index role_assignments_expires_at_index;');
  }
}
