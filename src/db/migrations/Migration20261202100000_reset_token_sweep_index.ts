import { Migration } from '@mikro-orm/migrations';

/**
 * Reset links by expiry, for the hourly sweep: without it each batch read the whole table. Using a
 * link writes only `used_at`, which no index holds, so it stays a HOT update.
 */
export class Migration20261202100000_reset_token_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index password_reset_tokens_expires_at_index on password_reset_tokens (expires_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index password_reset_tokens_expires_at_index;');
  }
}
