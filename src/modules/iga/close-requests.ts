import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { emitEvent } from '../events/events.ts';
import { AccessRequest } from './iga.entity.ts';

/** What a webhook receiver is told about a request: never a secret, and no justification text. */
export function requestEventData(request: AccessRequest): Record<string, unknown> {
  return {
    id: request.id,
    status: request.status,
    requester: { id: request.requesterId, email: request.requesterEmail },
    entitlement: { type: request.entitlementType, id: request.entitlementId, name: request.entitlementName },
    decided_by: request.decidedByType ? { type: request.decidedByType, id: request.decidedById } : null,
    expires_at: request.grantExpiresAt ? request.grantExpiresAt.toISOString() : null,
  };
}

/**
 * Marks a pending request denied by the scope's actor, with `reason` as its note, and records it as
 * every denial is: an `access_request.deny` audit row (with `details` added to its usual ones) and an
 * `access_request.denied` event.
 */
export function recordDenial(
  scope: AuditScope,
  request: AccessRequest,
  reason: string | null,
  now: Date,
  details: Record<string, unknown> = {},
): void {
  Object.assign(request, {
    status: 'denied',
    decidedByType: scope.actor.type,
    decidedById: scope.actor.id,
    decidedAt: now,
    decisionReason: reason,
  });
  recordAudit(scope, {
    eventType: 'access_request.deny',
    target: { type: 'access_request', id: request.id },
    details: {
      requester_id: request.requesterId,
      entitlement_type: request.entitlementType,
      entitlement_id: request.entitlementId,
      ...details,
    },
  });
  emitEvent(scope, 'access_request.denied', { ...requestEventData(request), reason }, now);
}

/**
 * Denies the pending requests a deletion leaves unanswerable: those of a deleted requester, or for a
 * deleted role or group (approving them could only answer 409). Each is decided by whoever deleted,
 * with `reason` as its note, audited and announced as any denial is. Returns how many were closed.
 */
export async function denyOrphanedRequests(
  scope: AuditScope,
  of: { requesterId: string } | { entitlementId: string },
  reason: string,
  now: Date,
): Promise<number> {
  const pending = await scope.em.find(AccessRequest, { ...of, status: 'pending' });
  for (const request of pending) recordDenial(scope, request, reason, now, { orphaned: true });
  return pending.length;
}
