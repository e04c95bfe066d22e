import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { idStem, isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { emitEvent } from '../events/events.ts';
import { GroupMember } from '../groups/group.entity.ts';
import { removeMember } from '../groups/groups.service.ts';
import { RoleAssignment } from '../roles/role.entity.ts';
import { revokeRole } from '../roles/roles.service.ts';
import { findEntitlement } from './entitlements.service.ts';
import { AccessReview, AccessReviewItem, type Decision, type ReviewStatus } from './iga.entity.ts';
import { futureInstant } from './requests.service.ts';
import type { AccessReviewView, ListItemsInput, ReviewItemView, StartReviewInput } from './iga.schema.ts';

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

export function toReviewView(review: AccessReview): AccessReviewView {
  return {
    id: review.id,
    name: review.name,
    scope: { type: review.scopeType, id: review.scopeId, name: review.scopeName },
    status: review.status,
    progress: {
      total: review.itemCount,
      decided: review.decidedCount,
      kept: review.keptCount,
      revoked: review.revokedCount,
      percent: review.itemCount === 0 ? 100 : Math.floor((review.decidedCount * 100) / review.itemCount),
    },
    created_by: { type: review.createdByType, id: review.createdById },
    created_at: review.createdAt.toISOString(),
    due_at: iso(review.dueAt),
    completed_at: iso(review.completedAt),
  };
}

function toItemView(item: AccessReviewItem): ReviewItemView {
  return {
    id: item.id,
    review_id: item.reviewId,
    user: { id: item.userId, email: item.userEmail },
    entitlement: { type: item.entitlementType, id: item.entitlementId, name: item.entitlementName },
    grant_expires_at: iso(item.grantExpiresAt),
    decision: item.decision,
    decided_by: item.decidedByType ? { type: item.decidedByType, id: item.decidedById } : null,
    decided_at: iso(item.decidedAt),
    comment: item.comment,
  };
}

/**
 * The grants a scope covers now, as rows to review: live role assignments and group memberships
 * (`everyone`: all of them except the built-in member role, which grants nothing). An application
 * scope will add its users' grants here.
 */
function grantsOf(scope: StartReviewInput['scope']): { sql: string; params: (workspaceId: string, now: Date) => unknown[] } {
  const roles = `select ra.user_id, 'role' as type, ra.role_id as entitlement_id, r.name, ra.expires_at
                   from role_assignments ra join roles r on r.id = ra.role_id
                  where ra.workspace_id = ? and (ra.expires_at is null or ra.expires_at > ?)`;
  const groups = `select gm.user_id, 'group' as type, gm.group_id as entitlement_id, g.name, null::timestamptz as expires_at
                    from group_members gm join groups g on g.id = gm.group_id where gm.workspace_id = ?`;
  if (scope.type === 'role') return { sql: `${roles} and ra.role_id = ?`, params: (ws, now) => [ws, now, scope.id] };
  if (scope.type === 'group') return { sql: `${groups} and gm.group_id = ?`, params: (ws) => [ws, scope.id] };
  return {
    sql: `${roles} and not (r.builtin and r.key = 'member') union all ${groups}`,
    params: (ws, now) => [ws, now, ws],
  };
}

/**
 * Starts a review over a scope: one item per grant it covers now, inserted in one statement however
 * many there are. A scope with no grants gives a review that is complete at once.
 */
export async function startReview(scope: AuditScope, input: StartReviewInput, now: Date): Promise<AccessReviewView> {
  const { em } = scope;
  const dueAt = futureInstant(input.due_at, 'due_at', now);
  let scopeName: string | null = null;
  // A role named by its key is kept by its id, as one named by its id.
  let reviewed = input.scope;
  if (reviewed.type !== 'everyone') {
    const entitlement = await findEntitlement(em, reviewed.id);
    if (entitlement.type !== reviewed.type) throw new AppError('NOT_FOUND', `No such ${reviewed.type}`);
    reviewed = { type: reviewed.type, id: entitlement.id };
    scopeName = entitlement.name;
  }
  const review = Object.assign(new AccessReview(), {
    id: newId('rev'),
    workspaceId: scope.workspaceId,
    name: input.name,
    scopeType: reviewed.type,
    scopeId: reviewed.type === 'everyone' ? null : reviewed.id,
    scopeName,
    status: 'in_progress' as ReviewStatus,
    itemCount: 0,
    decidedCount: 0,
    keptCount: 0,
    revokedCount: 0,
    createdByType: scope.actor.type,
    createdById: scope.actor.id,
    createdAt: now,
    dueAt,
    completedAt: null,
  });
  em.persist(review);
  const grants = grantsOf(reviewed);
  const [inserted] = await em.execute<{ n: number }[]>(
    `with ins as (
       insert into access_review_items (id, workspace_id, review_id, user_id, user_email, entitlement_type, entitlement_id,
                                        entitlement_name, grant_expires_at, created_at)
       select ? || substr(md5(random()::text || g.user_id || g.entitlement_id), 1, 16), ?, ?, g.user_id, u.email, g.type,
              g.entitlement_id, g.name, g.expires_at, ?
         from (${grants.sql}) g join users u on u.id = g.user_id
       returning 1
     ) select count(*)::int as n from ins`,
    [idStem('rvi'), scope.workspaceId, review.id, now, ...grants.params(scope.workspaceId, now)],
  );
  review.itemCount = inserted?.n ?? 0;
  recordAudit(scope, {
    eventType: 'access_review.start',
    target: { type: 'access_review', id: review.id },
    details: { name: review.name, scope: { type: review.scopeType, id: review.scopeId }, items: review.itemCount },
  });
  emitEvent(scope, 'access_review.started', reviewEventData(toReviewView(review)), now);
  if (review.itemCount === 0) completeReview(scope, review, now);
  return toReviewView(review);
}

function reviewEventData(view: AccessReviewView): Record<string, unknown> {
  return { id: view.id, name: view.name, scope: view.scope, progress: view.progress };
}

/**
 * Marks the review completed, with its audit row and `access_review.completed` event: after its last
 * decision, or at once when it covers no grant (a subscriber hears of every completion).
 */
function completeReview(scope: AuditScope, review: AccessReview, now: Date): void {
  Object.assign(review, { status: 'completed', completedAt: now });
  const view = toReviewView(review);
  recordAudit(scope, { eventType: 'access_review.complete', target: { type: 'access_review', id: review.id }, details: view.progress });
  emitEvent(scope, 'access_review.completed', reviewEventData(view), now);
}

export async function listReviews(em: EntityManager, query: PageQuery & { status?: ReviewStatus }) {
  const [rows, total] = await em.findAndCount(AccessReview, query.status ? { status: query.status } : {}, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    ...offsetOf(query),
  });
  return toPage(rows.map(toReviewView), total, query);
}

async function findReview(em: EntityManager, id: string): Promise<AccessReview> {
  const review = isId('rev', id) ? await em.findOne(AccessReview, { id }) : null;
  if (!review) throw new AppError('NOT_FOUND', 'No such access review');
  return review;
}

export async function getReview(em: EntityManager, id: string): Promise<AccessReviewView> {
  return toReviewView(await findReview(em, id));
}

export async function listItems(em: EntityManager, query: ListItemsInput) {
  const review = await findReview(em, query.id);
  const where: Record<string, unknown> = { reviewId: review.id };
  if (query.decision) where.decision = query.decision === 'pending' ? null : query.decision;
  const [rows, total] = await em.findAndCount(AccessReviewItem, where, {
    orderBy: { entitlementName: 'asc', userEmail: 'asc', id: 'asc' },
    ...offsetOf(query),
  });
  return toPage(rows.map(toItemView), total, query);
}

/**
 * Takes the item's access away now, if it is still there: it may have been revoked meanwhile, or a
 * time-bound role may have expired (then nothing is removed here: its lapse is told as such, once, by
 * roles/lapses.ts).
 */
async function removeAccess(scope: AuditScope, principal: Principal, item: AccessReviewItem, now: Date): Promise<boolean> {
  if (item.entitlementType === 'role') {
    const live = { userId: item.userId, roleId: item.entitlementId, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] };
    // Locked, as the revoke locks it: a lapse deleting it now then comes first (nothing to remove) or waits.
    if (!(await scope.em.findOne(RoleAssignment, live, { lockMode: LockMode.PESSIMISTIC_WRITE }))) return false;
    await revokeRole(scope, principal, { user_id: item.userId, role_id: item.entitlementId }, now);
    return true;
  }
  if (!(await scope.em.findOne(GroupMember, { userId: item.userId, groupId: item.entitlementId }))) return false;
  await removeMember(scope, item.entitlementId, item.userId);
  return true;
}

/**
 * Decides one item, once. The review row is locked first (decisions of one review queue up, so its
 * counters stay exact and exactly one decision completes it), then the item; a decided item is 409.
 * Nobody reviews their own access (as nobody decides their own request): someone else certifies it.
 * `revoke` removes the access in the same transaction, through the roles and groups rules (only
 * owners revoke owner, the last owner stays).
 */
export async function decideItem(
  scope: AuditScope,
  principal: Principal,
  input: { id: string; item_id: string; decision: Decision; comment?: string },
  now: Date,
): Promise<{ item: ReviewItemView; review: AccessReviewView }> {
  const { em } = scope;
  const review = isId('rev', input.id) ? await em.findOne(AccessReview, { id: input.id }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
  if (!review) throw new AppError('NOT_FOUND', 'No such access review');
  const item = isId('rvi', input.item_id) ? await em.findOne(AccessReviewItem, { id: input.item_id, reviewId: review.id }) : null;
  if (!item) throw new AppError('NOT_FOUND', 'No such item in this review');
  if (item.decision) throw new AppError('CONFLICT', `This item was already decided (${item.decision})`);
  if (principal.type === 'user' && principal.id === item.userId) throw new AppError('FORBIDDEN', 'You cannot review your own access');
  const removed = input.decision === 'revoke' ? await removeAccess(scope, principal, item, now) : false;
  Object.assign(item, {
    decision: input.decision,
    decidedByType: scope.actor.type,
    decidedById: scope.actor.id,
    decidedAt: now,
    comment: input.comment ?? null,
  });
  review.decidedCount += 1;
  if (input.decision === 'keep') review.keptCount += 1;
  else review.revokedCount += 1;
  recordAudit(scope, {
    eventType: 'access_review.decide',
    target: { type: 'access_review', id: review.id },
    details: {
      item_id: item.id,
      user_id: item.userId,
      entitlement_type: item.entitlementType,
      entitlement_id: item.entitlementId,
      decision: input.decision,
      access_removed: removed,
    },
  });
  if (review.decidedCount >= review.itemCount) completeReview(scope, review, now);
  return { item: toItemView(item), review: toReviewView(review) };
}
