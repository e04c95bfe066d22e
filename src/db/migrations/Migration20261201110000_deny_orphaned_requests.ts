import { Migration } from '@mikro-orm/migrations';
import { idStem } from '../../core/ids.ts';

/**
 * Deleting a requester, a role or a group now denies the pending requests it orphans, but requests
 * orphaned before that stayed pending for ever (approving them can only answer 409). They are denied
 * here as the deletion would have denied them, by the system: the same note, an `access_request.deny`
 * audit row (`details.orphaned: true`) and an `access_request.denied` event each. Running it again
 * finds none.
 */
export class Migration20261201110000_deny_orphaned_requests extends Migration {
  override async up(): Promise<void> {
    // Ids of the rows written here: a stem of this moment and 16 hex characters (core/ids.ts idStem).
    const [auditStem, eventStem] = [idStem('evt'), idStem('msg')];
    this.addSql(
      `with orphaned as (
         select r.id,
                case
                  when not exists (select 1 from users u where u.id = r.requester_id) then 'The requester''s account was deleted'
                  when r.entitlement_type = 'role' and not exists (select 1 from roles x where x.id = r.entitlement_id) then 'The role was deleted'
                  when r.entitlement_type = 'group' and not exists (select 1 from groups g where g.id = r.entitlement_id) then 'The group was deleted'
                end as reason
           from access_requests r where r.status = 'pending'
       ), closed as (
         update access_requests r
            set status = 'denied', decided_by_type = 'system', decided_by_id = null, decided_at = now(), decision_reason = o.reason
           from orphaned o
          where o.id = r.id and o.reason is not null
         returning r.id, r.workspace_id, r.requester_id, r.requester_email, r.entitlement_type, r.entitlement_id, r.entitlement_name,
                   r.decision_reason
       ), audited as (
         insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id, details, created_at)
         select '${auditStem}' || substr(md5('audit' || c.id), 1, 16), c.workspace_id, 'access_request.deny', 'success', 'system', null,
                'access_request', c.id,
                jsonb_build_object('requester_id', c.requester_id, 'entitlement_type', c.entitlement_type,
                                   'entitlement_id', c.entitlement_id, 'orphaned', true),
                now()
           from closed c
       )
       insert into events (id, workspace_id, type, payload, created_at)
       select '${eventStem}' || substr(md5('event' || c.id), 1, 16), c.workspace_id, 'access_request.denied',
              jsonb_build_object(
                'id', c.id, 'status', 'denied',
                'requester', jsonb_build_object('id', c.requester_id, 'email', c.requester_email),
                'entitlement', jsonb_build_object('type', c.entitlement_type, 'id', c.entitlement_id, 'name', c.entitlement_name),
                'decided_by', jsonb_build_object('type', 'system', 'id', null),
                'expires_at', null,
                'reason', c.decision_reason),
              now()
         from closed c`,
    );
  }
}
