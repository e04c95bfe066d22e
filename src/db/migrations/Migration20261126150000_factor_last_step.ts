import { Migration } from '@mikro-orm/migrations';

/**
 * The TOTP replay guard moves from the user to the factor: each factor's codes are spent on their own,
 * so a second authenticator can be confirmed in the same 30 seconds as the first. Steps a user spent
 * stay spent on every factor they hold.
 */
export class Migration20261126150000_factor_last_step extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table mfa_factors add column last_step bigint null;
      update mfa_factors f set last_step = u.mfa_last_step from users u where u.id = f.user_id and u.mfa_last_step is not null;
      alter table users drop column mfa_last_step;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      alter table users add column mfa_last_step bigint null;
      update users u set mfa_last_step = (select max(last_step) from mfa_factors f where f.user_id = u.id);
      alter table mfa_factors drop column last_step;
    `);
  }
}
