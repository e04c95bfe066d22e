import { Migration } from '@mikro-orm/migrations';

/**
 * Second-factor challenges by expiry, for the hourly sweep: without it each batch read the whole
 * table. Answering a challenge writes only `used_at`, which no index holds, so it stays a HOT update.
 */
export class Migration20261202110000_challenge_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index mfa_challenges_expires_at_index on mfa_challenges (expires_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop index mfa_challenges_expires_at_index;');
  }
}
