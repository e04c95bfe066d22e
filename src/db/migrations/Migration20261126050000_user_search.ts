import { Migration } from '@mikro-orm/migrations';

/**
 * `GET /api/v1/users?q=` matches anywhere in email or name, case-insensitively (ILIKE '%q%'):
 * trigram indexes make that an index scan instead of reading the whole workspace.
 */
export class Migration20261126050000_user_search extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create extension if not exists pg_trgm;
      create index users_email_trgm_index on users using gin (email gin_trgm_ops);
      create index users_name_trgm_index on users using gin (name gin_trgm_ops);
    `);
  }
}
