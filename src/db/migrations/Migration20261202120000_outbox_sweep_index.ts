import { Migration } from '@mikro-orm/migrations';

/**
 * Sent and given-up mail by the time it was queued, for the hourly sweep: without it each batch read
 * the whole outbox. `created_at` is never written again; every update of a queued mail already
 * writes `status` or `next_attempt_at`, which other indexes hold, so none was a HOT update before.
 */
export class Migration20261202120000_outbox_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql("create index email_outbox_done_index on email_outbox (created_at) where status <> 'pending';");
  }

  override async down(): Promise<void> {
    this.addSql('drop index email_outbox_done_index;');
  }
}
