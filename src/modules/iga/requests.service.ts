import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { grants } from '../../core/permissions.ts';
import { offsetOf, toPage } from '../../core/pagination.ts';
import { queueEmail } from '../email/outbox.ts';
import { emailTemplateFor } from '../email-templates/email-templates.service.ts';
import { emitEvent } from '../events/events.ts';
import { addMember } from '../groups/groups.service.ts';
import { assignRole } from '../roles/roles.service.ts';
import { User } from '../users/user.entity.ts';
import { findUser } from '../users/users.service.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { currentGrant, findEntitlement, lookupEntitlement, type Entitlement } from './entitlements.service.ts';
import { recordDenial, requestEventData } from './close-requests.ts';
import { AccessRequest } from './iga.entity.ts';
import type { AccessRequestView, ListRequestsInput } from './iga.schema.ts';

/** At most this many approvers are emailed about a new request. */
const APPROVERS_EMAILED = 50;

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

export function toRequestView(request: AccessRequest): AccessRequestView {
  return {
    id: request.id,
    requester: { id: request.requesterId, email: request.requesterEmail },
    entitlement: { type: request.entitlementType, id: request.entitlementId, name: request.entitlementName },
    justification: request.justification,
    status: request.status,
    created_at: request.createdAt.toISOString(),
    decided_at: iso(request.decidedAt),
    decided_by: request.decidedByType ? { type: request.decidedByType, id: request.decidedById } : null,
    decision_reason: request.decisionReason,
    expires_at: iso(request.grantExpiresAt),
  };
}

/** Active users whose live roles let them decide requests (`*` or `iga:write`), the requester aside. */
async function approverEmails(em: EntityManager, workspaceId: string, requesterId: string, now: Date): Promise<string[]> {
  const rows = await em.execute<{ email: string }[]>(
    `select distinct u.email from users u
       join role_assignments ra on ra.user_id = u.id and (ra.expires_at is null or ra.expires_at > ?)
       join roles r on r.id = ra.role_id
      where u.workspace_id = ? and u.status = 'active' and u.id <> ?
        and (r.permissions @> '["*"]'::jsonb or r.permissions @> '["iga:write"]'::jsonb)
      order by u.email limit ?`,
    [now, workspaceId, requesterId, APPROVERS_EMAILED],
  );
  return rows.map((r) => r.email);
}

/** A time the caller sets that must be ahead of `now` (a grant's end, a review's due date); 400 on `path` otherwise. */
export function futureInstant(value: string | null | undefined, path: string, now: Date): Date | null {
  const instant = value ? new Date(value) : null;
  if (instant && instant <= now) {
    throw new AppError('BAD_REQUEST', `${path} must be in the future`, { details: [{ path, message: 'must be in the future' }] });
  }
  return instant;
}

async function workspaceName(em: EntityManager, workspaceId: string): Promise<string> {
  return (await em.findOneOrFail(Workspace, { id: workspaceId })).name;
}

/**
 * A signed-in user asks for a role or a group they do not hold, or hold only until a date (to extend
 * it); admins are emailed and an event is emitted.
 */
export async function createRequest(
  scope: AuditScope,
  requesterId: string,
  input: { entitlement_id: string; justification?: string },
  now: Date,
): Promise<AccessRequestView> {
  const { em } = scope;
  const requester = await findUser(em, requesterId);
  const entitlement = await findEntitlement(em, input.entitlement_id);
  // A grant with an end date may be asked for again, to extend it (approval never shortens it).
  const current = await currentGrant(em, entitlement, requester.id, now);
  if (current && !current.expiresAt) throw new AppError('CONFLICT', 'You already have this access');
  if ((await em.count(AccessRequest, { requesterId: requester.id, entitlementId: entitlement.id, status: 'pending' })) > 0) {
    throw new AppError('CONFLICT', 'You already have a pending request for this access');
  }
  const request = Object.assign(new AccessRequest(), {
    id: newId('req'),
    workspaceId: scope.workspaceId,
    requesterId: requester.id,
    requesterEmail: requester.email,
    entitlementType: entitlement.type,
    entitlementId: entitlement.id,
    entitlementName: entitlement.name,
    justification: input.justification ?? null,
    status: 'pending' as const,
    decidedByType: null,
    decidedById: null,
    decidedAt: null,
    decisionReason: null,
    grantExpiresAt: null,
    createdAt: now,
  });
  em.persist(request);
  recordAudit(scope, {
    eventType: 'access_request.create',
    target: { type: 'access_request', id: request.id },
    details: { entitlement_type: entitlement.type, entitlement_id: entitlement.id },
  });
  emitEvent(scope, 'access_request.created', requestEventData(request), now);
  const name = await workspaceName(em, scope.workspaceId);
  const template = await emailTemplateFor(em, scope.workspaceId, 'access_request_created');
  for (const to of await approverEmails(em, scope.workspaceId, requester.id, now)) {
    queueEmail(
      em,
      {
        workspaceId: scope.workspaceId,
        template,
        to,
        vars: {
          workspace_name: name,
          requester_email: requester.email,
          entitlement: `${entitlement.type} ${entitlement.name}`,
          justification: input.justification ?? 'none given',
          request_id: request.id,
        },
      },
      now,
    );
  }
  return toRequestView(request);
}

/**
 * Whose requests a caller lists: everyone's with `iga:read`; otherwise only their own (returned as
 * their id), so a member can follow what they asked for without seeing what others asked for.
 */
export function listableRequester(principal: Principal): string | undefined {
  return grants(principal.grants, 'iga:read') ? undefined : principal.id;
}

/** Requests, newest first, filtered as asked; `onlyRequester` narrows them to one requester's whatever the filters say. */
export async function listRequests(em: EntityManager, query: ListRequestsInput, onlyRequester?: string) {
  const where: Record<string, unknown> = {};
  if (query.status) where.status = query.status;
  if (query.requester_id) where.requesterId = query.requester_id;
  if (query.entitlement_id) where.entitlementId = query.entitlement_id;
  const scoped = onlyRequester ? { $and: [where, { requesterId: onlyRequester }] } : where;
  const [rows, total] = await em.findAndCount(AccessRequest, scoped, { orderBy: { createdAt: 'desc', id: 'desc' }, ...offsetOf(query) });
  return toPage(rows.map(toRequestView), total, query);
}

async function findRequest(em: EntityManager, id: string, lock = false): Promise<AccessRequest> {
  const request = isId('req', id) ? await em.findOne(AccessRequest, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) : null;
  if (!request) throw new AppError('NOT_FOUND', 'No such access request');
  return request;
}

/** One request; narrowed by `onlyRequester` as the list is, so another's request is NOT_FOUND to them. */
export async function getRequest(em: EntityManager, id: string, onlyRequester?: string): Promise<AccessRequestView> {
  const request = await findRequest(em, id);
  if (onlyRequester && request.requesterId !== onlyRequester) throw new AppError('NOT_FOUND', 'No such access request');
  return toRequestView(request);
}

/**
 * The pending request, locked for this transaction: a concurrent decision waits, then finds it
 * decided (409). Nobody decides their own request.
 */
async function pendingRequest(scope: AuditScope, principal: Principal, id: string): Promise<AccessRequest> {
  const request = await findRequest(scope.em, id, true);
  if (request.status !== 'pending') throw new AppError('CONFLICT', `This request was already ${request.status}`);
  if (principal.type === 'user' && principal.id === request.requesterId) {
    throw new AppError('FORBIDDEN', 'You cannot decide your own access request');
  }
  return request;
}

/** Whether granting until `expiresAt` changes anything: an existing grant that lasts as long is kept as it is. */
function changesGrant(current: { expiresAt: Date | null } | null, expiresAt: Date | null): boolean {
  if (!current) return true;
  if (!current.expiresAt) return false;
  return !expiresAt || expiresAt > current.expiresAt;
}

async function grant(scope: AuditScope, principal: Principal, entitlement: Entitlement, userId: string, expiresAt: Date | null, now: Date) {
  const current = await currentGrant(scope.em, entitlement, userId, now);
  if (!changesGrant(current, expiresAt)) return;
  if (entitlement.type === 'role') {
    await assignRole(scope, principal, { user_id: userId, role_id: entitlement.id, expires_at: expiresAt?.toISOString() ?? null }, now);
  } else {
    await addMember(scope, entitlement.id, userId, now);
  }
}

async function notifyDecision(scope: AuditScope, principal: Principal, request: AccessRequest, details: string, now: Date) {
  const { em } = scope;
  const approver = principal.type === 'user' ? await em.findOne(User, { id: principal.id }) : null;
  const vars = {
    workspace_name: await workspaceName(em, scope.workspaceId),
    requester_email: request.requesterEmail,
    entitlement: `${request.entitlementType} ${request.entitlementName}`,
    decision: request.status,
    decided_by: approver?.email ?? 'an API key',
    details,
  };
  const template = await emailTemplateFor(em, scope.workspaceId, 'access_request_decided');
  for (const to of new Set([request.requesterEmail, ...(approver ? [approver.email] : [])])) {
    queueEmail(em, { workspaceId: scope.workspaceId, template, to, vars }, now);
  }
}

/**
 * The decider's note: `reason` or `comment`, which mean the same. Both are taken only when they agree;
 * two different notes are 400 rather than one of them silently lost.
 */
function decisionNote(input: { reason?: string; comment?: string }): string | null {
  if (input.reason !== undefined && input.comment !== undefined && input.reason !== input.comment) {
    throw new AppError('BAD_REQUEST', 'Send reason or comment, not both', {
      details: [{ path: 'comment', message: 'send reason or comment, not both' }],
    });
  }
  return input.reason ?? input.comment ?? null;
}

/** Approves and grants in the same transaction, optionally until `expires_at` (roles only). */
export async function approveRequest(
  scope: AuditScope,
  principal: Principal,
  input: { id: string; expires_at?: string | null; reason?: string; comment?: string },
  now: Date,
): Promise<AccessRequestView> {
  const expiresAt = futureInstant(input.expires_at, 'expires_at', now);
  const note = decisionNote(input);
  const request = await pendingRequest(scope, principal, input.id);
  if (expiresAt && request.entitlementType !== 'role') {
    throw new AppError('BAD_REQUEST', 'Only role grants can be time-bound', { details: [{ path: 'expires_at', message: 'roles only' }] });
  }
  const entitlement = await lookupEntitlement(scope.em, request.entitlementId);
  if (!entitlement) throw new AppError('CONFLICT', 'The requested role or group no longer exists');
  if (!(await scope.em.findOne(User, { id: request.requesterId }))) {
    throw new AppError('CONFLICT', "The requester's account no longer exists");
  }
  await grant(scope, principal, entitlement, request.requesterId, expiresAt, now);
  Object.assign(request, {
    status: 'approved',
    decidedByType: scope.actor.type,
    decidedById: scope.actor.id,
    decidedAt: now,
    decisionReason: note,
    grantExpiresAt: expiresAt,
  });
  recordAudit(scope, {
    eventType: 'access_request.approve',
    target: { type: 'access_request', id: request.id },
    details: {
      requester_id: request.requesterId,
      entitlement_type: request.entitlementType,
      entitlement_id: request.entitlementId,
      expires_at: iso(expiresAt),
    },
  });
  emitEvent(scope, 'access_request.approved', requestEventData(request), now);
  await notifyDecision(
    scope,
    principal,
    request,
    expiresAt ? `The access lasts until ${expiresAt.toISOString()}.` : 'The access has no end date.',
    now,
  );
  return toRequestView(request);
}

/**
 * The requester withdraws their own pending request. Someone else's request is NOT_FOUND to a caller
 * who may not read it (as `getRequest` answers), and FORBIDDEN to one who may (an approver denies it
 * instead); a decided request is CONFLICT. Nobody is emailed: nothing changed for anyone else.
 */
export async function cancelRequest(
  scope: AuditScope,
  principal: Principal,
  input: { id: string; reason?: string; comment?: string },
  now: Date,
): Promise<AccessRequestView> {
  const note = decisionNote(input);
  const request = await findRequest(scope.em, input.id, true);
  const own = principal.type === 'user' && principal.id === request.requesterId;
  if (!own && listableRequester(principal)) throw new AppError('NOT_FOUND', 'No such access request');
  if (!own) throw new AppError('FORBIDDEN', 'Only the requester may cancel an access request; deny it instead');
  if (request.status !== 'pending') throw new AppError('CONFLICT', `This request was already ${request.status}`);
  Object.assign(request, {
    status: 'cancelled',
    decidedByType: scope.actor.type,
    decidedById: scope.actor.id,
    decidedAt: now,
    decisionReason: note,
  });
  recordAudit(scope, {
    eventType: 'access_request.cancel',
    target: { type: 'access_request', id: request.id },
    details: { requester_id: request.requesterId, entitlement_type: request.entitlementType, entitlement_id: request.entitlementId },
  });
  emitEvent(scope, 'access_request.cancelled', { ...requestEventData(request), reason: note }, now);
  return toRequestView(request);
}

export async function denyRequest(
  scope: AuditScope,
  principal: Principal,
  input: { id: string; reason?: string; comment?: string },
  now: Date,
): Promise<AccessRequestView> {
  const reason = decisionNote(input);
  const request = await pendingRequest(scope, principal, input.id);
  recordDenial(scope, request, reason, now);
  await notifyDecision(scope, principal, request, reason ? `Reason: ${reason}` : 'No reason was given.', now);
  return toRequestView(request);
}
