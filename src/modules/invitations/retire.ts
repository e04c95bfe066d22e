import type { EntityManager } from '@mikro-orm/postgresql';
import { lockUntilCommit } from '../../core/advisory-locks.ts';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { InvitationStatus } from './invitation.entity.ts';

/**
 * Holds, to the transaction's end, the lock of an address in a workspace: taken by the invitation's
 * creation before it checks that no user has the address, by the invitation's acceptance before it
 * consumes the invitation, by its revocation and resend before they read its status again, and by
 * every way a user gets the address before it retires that address's invitations. Without it the
 * two, at once, each found nothing of the other (neither committed yet), and the address kept a user
 * and a pending invitation.
 *
 * Lock order: this lock first, before any row lock the transaction takes. The rows come after it: the
 * invitations of the address (consumed, retired, expired, inserted), the role's row an assignment
 * names (a key-share lock) and the owner role's row (owners.ts `lockOwnerRole`; an email change takes
 * the new address's lock before it), then the user's row and its counter row (`user_counts`, shared by
 * the connections of one slot: an acceptance takes its role's row before it inserts its user, as an
 * owner's lock, deactivation or deletion takes the owner role's row before the user's). Every path takes
 * one address's lock at most. A path that waits for the lock holding a row another path takes after
 * the lock would deadlock with it.
 */
export async function lockAddress(em: EntityManager, workspaceId: string, email: string): Promise<void> {
  await lockUntilCommit(em, 'invitationAddress', `${workspaceId} ${email}`);
}

/**
 * When an address gets a user by another way than its invitation (an admin creates the user or gives
 * an existing one the address, a social or SSO sign-in creates it), its pending invitation could only
 * answer 409: it is revoked in the same transaction (one past its date is recorded as expired
 * instead), each revocation audited with the reason and the user, so the list stops showing it as
 * pending and nobody resends it.
 */
export async function retireInvitationsOf(scope: AuditScope, email: string, userId: string, now: Date): Promise<void> {
  await lockAddress(scope.em, scope.workspaceId, email);
  const ended = await scope.em.execute<{ id: string; status: InvitationStatus }[]>(
    `update invitations set status = case when expires_at <= ? then 'expired' else 'revoked' end
      where workspace_id = ? and email = ? and status = 'pending' returning id, status`,
    [now, scope.workspaceId, email],
  );
  for (const { id } of ended.filter((row) => row.status === 'revoked')) {
    recordAudit(scope, {
      eventType: 'invitation.revoke',
      target: { type: 'invitation', id },
      details: { reason: 'user_exists', user_id: userId },
    });
  }
}
