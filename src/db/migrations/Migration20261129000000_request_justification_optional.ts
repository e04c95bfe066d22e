import { Migration } from '@mikro-orm/migrations';

/** An access request's justification is optional: null when the requester gave none. */
export class Migration20261129000000_request_justification_optional extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table access_requests alter column justification drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`
      update access_requests set justification = '' where justification is null;
      alter table access_requests alter column justification set not null;
    `);
  }
}
