import { Migration } from '@mikro-orm/migrations';

/**
 * Admin Portal links by the time both the link and its portal session expired, for the hourly sweep:
 * without it each batch read the whole table. The one update a link gets (opening it) writes
 * `session_expires_at` with `session_hash`, which was already indexed.
 */
export class Migration20261202150000_portal_link_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index portal_links_done_at_index on portal_links ((greatest(expires_at, session_expires_at)));');
  }

  override async down(): Promise<void> {
    this.addSql('drop index portal_links_done_at_index;');
  }
}
