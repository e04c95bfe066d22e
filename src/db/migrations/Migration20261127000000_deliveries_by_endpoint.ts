import { Migration } from '@mikro-orm/migrations';

/**
 * Pending deliveries by endpoint, oldest due first, in place of pending deliveries by due time: the
 * dispatcher takes each endpoint's share of the sends from here, so an endpoint with a long backlog
 * costs a claim no more than one without. With the old index in place the planner would still read
 * through a backlog by due time.
 */
export class Migration20261127000000_deliveries_by_endpoint extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index webhook_deliveries_pending_by_endpoint_index on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';
      drop index webhook_deliveries_due_index;
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      create index webhook_deliveries_due_index on webhook_deliveries (next_attempt_at) where status = 'pending';
      drop index webhook_deliveries_pending_by_endpoint_index;
    `);
  }
}
