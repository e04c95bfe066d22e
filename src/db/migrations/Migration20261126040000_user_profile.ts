import { Migration } from '@mikro-orm/migrations';

/** What a dashboard shows of a user beyond the basics: a verified-email flag and free metadata. */
export class Migration20261126040000_user_profile extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table users
        add column email_verified boolean not null default false,
        add column metadata jsonb not null default '{}'::jsonb;
    `);
  }
}
