import { Migration } from '@mikro-orm/migrations';

/**
 * Finished deliveries by their last attempt, for the hourly sweep: without it each batch read the
 * whole table. Claiming a delivery writes only `lease_until`, which no index holds, so it stays a HOT
 * update; recording an attempt (and redelivering) writes `status` and `next_attempt_at`, already
 * indexed, so it was never one.
 */
export class Migration20261202130000_delivery_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql("create index webhook_deliveries_done_index on webhook_deliveries (updated_at) where status <> 'pending';");
  }

  override async down(): Promise<void> {
    this.addSql('drop index webhook_deliveries_done_index;');
  }
}
