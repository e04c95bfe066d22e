import { Migration } from '@mikro-orm/migrations';

/** Where an application may send people after RP-initiated logout (`post_logout_redirect_uris`). */
export class Migration20261130000000_post_logout_redirect_uris extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table applications add column post_logout_redirect_uris jsonb not null default '[]'::jsonb;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table applications drop column post_logout_redirect_uris;`);
  }
}
