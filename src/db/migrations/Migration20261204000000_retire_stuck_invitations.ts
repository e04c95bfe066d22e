import { Migration } from '@mikro-orm/migrations';
import { idStem } from '../../core/ids.ts';

/**
 * Giving an address a user another way than its invitation now retires the invitation in the same
 * transaction (invitations/retire.ts), but invitations left pending that way before stayed `pending`
 * for ever while resend and accept could only answer 409. They are retired here as the live path
 * would have retired them, by the system: a pending invitation whose address (the same canonical
 * string the live path compares) belongs to a user of its own workspace becomes `revoked`, with an
 * `invitation.revoke` audit row (`reason: user_exists`, `user_id`); one already past its date is
 * recorded `expired`, unaudited, as the live path does. Other workspaces' invitations and addresses
 * with no user are untouched. Running it again finds none.
 */
export class Migration20261204000000_retire_stuck_invitations extends Migration {
  override async up(): Promise<void> {
    // Ids of the audit rows: a stem of this moment and 16 hex characters (core/ids.ts idStem).
    const auditStem = idStem('evt');
    this.addSql(
      `with stuck as (
         select i.id, u.id as user_id
           from invitations i
           join users u on u.workspace_id = i.workspace_id and u.email = i.email
          where i.status = 'pending'
       ), ended as (
         update invitations i
            set status = case when i.expires_at <= now() then 'expired' else 'revoked' end
           from stuck s
          where s.id = i.id
         returning i.id, i.workspace_id, i.status, s.user_id
       )
       insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id, details, created_at)
       select '${auditStem}' || substr(md5('audit' || e.id), 1, 16), e.workspace_id, 'invitation.revoke', 'success', 'system', null,
              'invitation', e.id, jsonb_build_object('reason', 'user_exists', 'user_id', e.user_id), now()
         from ended e
        where e.status = 'revoked'`,
    );
  }

  override async down(): Promise<void> {
    // A retired invitation could only answer 409; putting it back to pending would restore that.
  }
}
