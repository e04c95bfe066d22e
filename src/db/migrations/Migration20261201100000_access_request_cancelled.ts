import { Migration } from '@mikro-orm/migrations';

/** A requester may withdraw their own pending access request: `cancelled` joins the statuses. */
export class Migration20261201100000_access_request_cancelled extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table access_requests drop constraint access_requests_status_check;
      alter table access_requests add constraint access_requests_status_check
        check (status in ('pending', 'approved', 'denied', 'cancelled'));
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      update access_requests set status = 'denied' where status = 'cancelled';
      alter table access_requests drop constraint access_requests_status_check;
      alter table access_requests add constraint access_requests_status_check check (status in ('pending', 'approved', 'denied'));
    `);
  }
}
