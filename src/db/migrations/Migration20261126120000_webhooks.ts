import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook endpoints, and their deliveries with every attempt. Events wait in `events` (the outbox)
 * until the dispatcher fans them out to the endpoints that want them (`fanned_out_at`).
 */
export class Migration20261126120000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table events add column fanned_out_at timestamptz null;
      create index events_fan_out_index on events (created_at) where fanned_out_at is null;

      create table webhook_endpoints (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        url text not null,
        description text null,
        event_types jsonb not null,
        secret_sealed text not null,
        enabled boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_endpoints_workspace_id_index on webhook_endpoints (workspace_id);

      create table webhook_deliveries (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        endpoint_id text not null references webhook_endpoints(id) on delete cascade deferrable initially deferred,
        event_id text null,
        event_type text not null,
        payload jsonb not null,
        status text not null check (status in ('pending', 'succeeded', 'failed')),
        attempts integer not null,
        scheduled_attempts integer not null,
        response_status integer null,
        next_attempt_at timestamptz null,
        lease_until timestamptz null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index webhook_deliveries_due_index on webhook_deliveries (next_attempt_at) where status = 'pending';
      create index webhook_deliveries_endpoint_id_created_at_index on webhook_deliveries (endpoint_id, created_at desc);

      create table webhook_attempts (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        delivery_id text not null references webhook_deliveries(id) on delete cascade deferrable initially deferred,
        attempted_at timestamptz not null,
        response_status integer null,
        duration_ms integer not null,
        error text null
      );
      create index webhook_attempts_delivery_id_index on webhook_attempts (delivery_id);
    `);
  }
}
