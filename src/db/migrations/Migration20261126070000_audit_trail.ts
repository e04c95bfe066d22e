import { Migration } from '@mikro-orm/migrations';

/**
 * The audit trail becomes readable and tamper-evident:
 * - indexes for `GET /api/v1/audit/events/`, newest first, one per filter it serves (event type with
 *   outcome, outcome, actor, target, plain time range); the old (workspace_id, id) index is replaced by
 *   the time-ordered one;
 * - append-only in the database itself: a trigger refuses every UPDATE, DELETE and TRUNCATE of
 *   audit_events, whoever sends it (the ORM included);
 * - `events`, the durable outbox of domain events (access_request.approved, …) that the webhook
 *   dispatcher will deliver, written in the transaction of the change they describe.
 */
export class Migration20261126070000_audit_trail extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      drop index if exists audit_events_workspace_id_id_index;
      create index audit_events_recent_index on audit_events (workspace_id, created_at desc, id desc);
      create index audit_events_type_index on audit_events (workspace_id, event_type, created_at desc, id desc) include (outcome);
      create index audit_events_outcome_index on audit_events (workspace_id, outcome, created_at desc, id desc);
      create index audit_events_actor_index on audit_events (workspace_id, actor_id, created_at desc, id desc) where actor_id is not null;
      create index audit_events_target_index on audit_events (workspace_id, target_id, created_at desc, id desc) where target_id is not null;

      create function audit_events_append_only() returns trigger language plpgsql as $$
      begin
        raise exception 'audit_events is append-only: % refused', tg_op using errcode = 'insufficient_privilege';
      end;
      $$;
      create trigger audit_events_no_update_or_delete before update or delete on audit_events
        for each row execute function audit_events_append_only();
      create trigger audit_events_no_truncate before truncate on audit_events
        for each statement execute function audit_events_append_only();

      create table events (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade deferrable initially deferred,
        type text not null,
        payload jsonb not null,
        created_at timestamptz not null
      );
      create index events_workspace_id_created_at_index on events (workspace_id, created_at, id);
    `);
  }
}
