import { Migration } from '@mikro-orm/migrations';

/**
 * Sessions by the time they stopped mattering (ended, or else expired), for the hourly sweep: without
 * it each batch of the sweep read the whole table. A refresh writes only `last_refreshed_at`, which no
 * index holds, so it stays a HOT update; ending a session (once in its life) writes `ended_at` and so
 * adds an entry to each index.
 */
export class Migration20261202090000_session_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index sessions_done_at_index on sessions ((least(ended_at, expires_at)));');
  }

  override async down(): Promise<void> {
    this.addSql('drop index sessions_done_at_index;');
  }
}
