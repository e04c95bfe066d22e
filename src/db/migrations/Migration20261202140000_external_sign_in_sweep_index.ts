import { Migration } from '@mikro-orm/migrations';

/**
 * Social and SSO sign-ins in flight by the time both their state and their code expired, for the
 * hourly sweep: without it each batch read the whole table. The callback and the exchange write only
 * `called_back_at` and `exchanged_at` (HOT updates still); issuing the code writes `code_expires_at`
 * with `code_hash`, which was already indexed.
 */
export class Migration20261202140000_external_sign_in_sweep_index extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index external_sign_ins_done_at_index on external_sign_ins ((greatest(expires_at, code_expires_at)));');
  }

  override async down(): Promise<void> {
    this.addSql('drop index external_sign_ins_done_at_index;');
  }
}
