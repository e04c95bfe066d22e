import type { EntityManager } from '@mikro-orm/postgresql';
import { retriedTransaction } from '../../core/aborted-retry.ts';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import type { Origin } from '../auth/sessions.service.ts';
import { signInVerifiedUser } from '../auth/sign-in.ts';
import { queueEmail } from '../email/outbox.ts';
import { emailTemplateFor } from '../email-templates/email-templates.service.ts';
import { addAssignment } from '../roles/builtin-roles.ts';
import { assertMayGrant } from '../roles/owners.ts';
import { findRole } from '../roles/roles.service.ts';
import { User } from '../users/user.entity.ts';
import { newUser } from '../users/users.service.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { Invitation, type InvitationStatus } from './invitation.entity.ts';
import type { InvitationView } from './invitations.schema.ts';
import { emitEvent } from '../events/events.ts';
import { takenConflict } from '../../core/conflicts.ts';
import { lockAddress } from './retire.ts';

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** `expired` is a pending invitation past its date, whether or not a write has recorded it yet. */
function statusAt(invitation: Invitation, now: Date): InvitationStatus {
  return invitation.status === 'pending' && invitation.expiresAt <= now ? 'expired' : invitation.status;
}

function toView(invitation: Invitation, now: Date): InvitationView {
  return {
    id: invitation.id,
    email: invitation.email,
    role_id: invitation.roleId,
    status: statusAt(invitation, now),
    created_at: invitation.createdAt.toISOString(),
    expires_at: invitation.expiresAt.toISOString(),
    last_sent_at: invitation.lastSentAt.toISOString(),
    accepted_at: invitation.acceptedAt?.toISOString() ?? null,
    user_id: invitation.userId,
  };
}

export async function listInvitations(em: EntityManager, query: PageQuery & { status?: InvitationStatus }, now: Date) {
  const where: Record<string, unknown> = {};
  if (query.status === 'expired') Object.assign(where, { $or: [{ status: 'expired' }, { status: 'pending', expiresAt: { $lte: now } }] });
  else if (query.status === 'pending') Object.assign(where, { status: 'pending', expiresAt: { $gt: now } });
  else if (query.status) where.status = query.status;
  const [rows, total] = await em.findAndCount(Invitation, where, { orderBy: { id: 'desc' }, ...offsetOf(query) });
  return toPage(
    rows.map((i) => toView(i, now)),
    total,
    query,
  );
}

async function send(deps: AppDeps, em: EntityManager, invitation: Invitation, workspace: Workspace, token: string, now: Date) {
  queueEmail(
    em,
    {
      workspaceId: workspace.id,
      template: await emailTemplateFor(em, workspace.id, 'invitation'),
      to: invitation.email,
      vars: {
        link: `${deps.config.BASE_URL}/accept-invitation?token=${encodeURIComponent(token)}`,
        workspace_name: workspace.name,
        expires_days: String(INVITATION_TTL_MS / 86_400_000),
      },
    },
    now,
  );
}

async function findInvitation(em: EntityManager, id: string): Promise<Invitation> {
  const invitation = isId('inv', id) ? await em.findOne(Invitation, { id }) : null;
  if (!invitation) throw new AppError('NOT_FOUND', 'No such invitation');
  return invitation;
}

/**
 * The invitation, read again under its address's lock (retire.ts), for a change to it: an acceptance
 * or a user's path of the address that began first has committed by then, so its status is the one to
 * judge (read before the lock, an invitation accepted meanwhile was revoked, or resent, as pending).
 */
async function findInvitationToChange(scope: AuditScope, id: string): Promise<Invitation> {
  const invitation = await findInvitation(scope.em, id);
  await lockAddress(scope.em, scope.workspaceId, invitation.email);
  const current = await scope.em.refresh(invitation);
  if (!current) throw new AppError('NOT_FOUND', 'No such invitation');
  return current;
}

/**
 * 409 when the workspace has a user with this address: an invitation to it could only fail. `field`
 * names the request field that sent the address, when the request sent it (a resend sends none).
 */
export async function getInvitation(em: EntityManager, id: string, now: Date): Promise<InvitationView> {
  return toView(await findInvitation(em, id), now);
}

async function assertNoUserWith(em: EntityManager, email: string, field?: string): Promise<void> {
  if ((await em.count(User, { email })) === 0) return;
  const message = 'A user with this email already exists';
  throw field ? takenConflict(field, message, 'belongs to a user already') : new AppError('CONFLICT', message);
}

export async function createInvitation(
  deps: AppDeps,
  scope: AuditScope,
  principal: Principal,
  input: { email: string; role_id?: string },
  now: Date,
) {
  const { em } = scope;
  const role = await findRole(em, input.role_id || 'member');
  assertMayGrant(principal, role);
  // One at a time with a user getting the address, which retires its pending invitation (retire.ts).
  await lockAddress(em, scope.workspaceId, input.email);
  await assertNoUserWith(em, input.email, 'email');
  // A pending invitation past its date no longer blocks a new one.
  await em.nativeUpdate(Invitation, { email: input.email, status: 'pending', expiresAt: { $lte: now } }, { status: 'expired' });
  if ((await em.count(Invitation, { email: input.email, status: 'pending' })) > 0) {
    throw takenConflict('email', 'This email already has a pending invitation', 'has a pending invitation');
  }
  const token = newSecret('inv_');
  const invitation = Object.assign(new Invitation(), {
    id: newId('inv'),
    workspaceId: scope.workspaceId,
    email: input.email,
    roleId: role.id,
    status: 'pending' as const,
    tokenHash: sha256(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
    lastSentAt: now,
    acceptedAt: null,
    userId: null,
  });
  em.persist(invitation);
  await send(deps, em, invitation, await em.findOneOrFail(Workspace, { id: scope.workspaceId }), token, now);
  recordAudit(scope, {
    eventType: 'invitation.create',
    target: { type: 'invitation', id: invitation.id },
    details: { email: input.email, role: role.key },
  });
  emitEvent(scope, 'invitation.created', { id: invitation.id, email: input.email, role: role.key });
  return toView(invitation, now);
}

/**
 * A new link, valid 7 days from now (the old one stops working); only a pending invitation (409
 * otherwise). An admin's call, so only the global limit paces it.
 */
export async function resendInvitation(deps: AppDeps, scope: AuditScope, id: string, now: Date) {
  const invitation = await findInvitationToChange(scope, id);
  if (statusAt(invitation, now) !== 'pending') throw new AppError('CONFLICT', `This invitation is ${statusAt(invitation, now)}`);
  // A user created with the address since the invitation was sent: the new link could only answer 409.
  await assertNoUserWith(scope.em, invitation.email);
  const token = newSecret('inv_');
  Object.assign(invitation, { tokenHash: sha256(token), lastSentAt: now, expiresAt: new Date(now.getTime() + INVITATION_TTL_MS) });
  await send(deps, scope.em, invitation, await scope.em.findOneOrFail(Workspace, { id: scope.workspaceId }), token, now);
  recordAudit(scope, { eventType: 'invitation.resend', target: { type: 'invitation', id: invitation.id } });
  return toView(invitation, now);
}

export async function revokeInvitation(scope: AuditScope, id: string, now: Date) {
  const invitation = await findInvitationToChange(scope, id);
  if (statusAt(invitation, now) !== 'pending') throw new AppError('CONFLICT', `This invitation is ${statusAt(invitation, now)}`);
  invitation.status = 'revoked';
  recordAudit(scope, { eventType: 'invitation.revoke', target: { type: 'invitation', id: invitation.id } });
  return { id: invitation.id, deleted: true as const };
}

/**
 * Before a role is deleted: its pending invitations are revoked in one statement (one past its date
 * is recorded as expired instead), each revocation audited with the reason, so that no link is left
 * that would give a role that no longer exists. Answers how many were revoked.
 */
export async function revokeInvitationsOfRole(scope: AuditScope, role: { id: string; key: string }, now: Date): Promise<number> {
  const ended = await scope.em.execute<{ id: string; status: InvitationStatus }[]>(
    `update invitations set status = case when expires_at <= ? then 'expired' else 'revoked' end
      where workspace_id = ? and role_id = ? and status = 'pending' returning id, status`,
    [now, scope.workspaceId, role.id],
  );
  const revoked = ended.filter((row) => row.status === 'revoked');
  for (const { id } of revoked) {
    recordAudit(scope, {
      eventType: 'invitation.revoke',
      target: { type: 'invitation', id },
      details: { reason: 'role_deleted', role_id: role.id, role: role.key },
    });
  }
  return revoked.length;
}

const DEAD_LINK = 'The invitation link is invalid, expired, revoked or already used';

const USER_EXISTS = 'A user with this email already exists: sign in instead of accepting the invitation';

/**
 * The refusal of an invitation link that cannot be used. A known one names its workspace, so the
 * attempt is audited there (and kept): the invitation was accepted, revoked or has expired (401), or
 * its address has a user by now (409; such an invitation is revoked when the user is created, so a
 * revoked one whose address has a user answers so too). An unknown one names no workspace, and
 * nothing is recorded.
 */
async function refuseInvitation(em: EntityManager, tokenHash: string, origin: Origin, now: Date): Promise<AppError> {
  const invitation = await em.findOne(Invitation, { tokenHash }, { filters: false });
  if (!invitation) return new AppError('INVALID_TOKEN', DEAD_LINK);
  const status = statusAt(invitation, now);
  const userExists =
    status === 'pending' ||
    (status === 'revoked' &&
      (await em.count(User, { workspaceId: invitation.workspaceId, email: invitation.email }, { filters: false })) > 0);
  recordAudit(
    { em, workspaceId: invitation.workspaceId, actor: { type: 'system', id: null }, ...origin },
    {
      eventType: 'invitation.accept',
      outcome: 'failure',
      target: { type: 'invitation', id: invitation.id },
      details: { reason: userExists ? 'user_exists' : `invitation_${status}` },
    },
  );
  if (userExists) return new AppError('CONFLICT', USER_EXISTS, { keepChanges: true });
  return new AppError('INVALID_TOKEN', DEAD_LINK, { keepChanges: true });
}

/**
 * The invitee accepts, in two steps. First one transaction (run again when PostgreSQL aborts it):
 * the invitation is consumed by one conditional UPDATE (pending, unexpired, and no user has its
 * address yet), the user is created with the invited role, audited and told to subscribers. The
 * address's lock is taken first, before the invitation's row, as every other path that gives the
 * address a user or an invitation takes it (retire.ts): an invitation asked for meanwhile waits and
 * finds this user (409). No other invitation of the address can be pending to retire: at most one is
 * (`invitations_one_pending`), and it is this one.
 *
 * Then, once that committed, the new user is signed in as any sign-in is (the answer is a sign-in's),
 * outside any transaction: the workspace's post-login actions run in the sandbox there (up to
 * ACTION_TIMEOUT_MS, the sandbox's first start a second or more), holding no connection, and every
 * write of the sign-in is atomic on its own (auth/sign-in.ts). A refused sign-in (an action's deny or
 * failure, a second factor required) keeps the account and the used link, as it did when both steps
 * were one transaction committed with the refusal (`keepChanges`).
 */
export async function acceptInvitation(
  deps: AppDeps,
  em: EntityManager,
  input: { token: string; password: string; name?: string },
  origin: Origin,
) {
  const invitee = await retriedTransaction(em, { log: deps.log, requestId: origin.requestId, path: 'invitations.accept' }, (tx) =>
    createInvitee(deps, tx, input, origin),
  );
  em.setFilterParams('tenant', { workspaceId: invitee.workspaceId });
  // Accepting signs the invitee in, so the stages after the password run as for any sign-in (a
  // post-login action may deny it or add claims).
  const result = await signInVerifiedUser(deps, em, {
    workspaceId: invitee.workspaceId,
    userId: invitee.userId,
    method: 'invitation',
    origin,
  });
  // An account made a moment ago has no verified factor, so nothing can answer it with a challenge.
  if (result.kind === 'challenge') throw new AppError('INTERNAL', 'A new account was asked for a second factor it cannot have');
  return result.tokens;
}

/** The acceptance's transaction: the invitation consumed, its user created with the role; answers who. */
async function createInvitee(
  deps: AppDeps,
  em: EntityManager,
  input: { token: string; password: string; name?: string },
  origin: Origin,
): Promise<{ workspaceId: string; userId: string }> {
  const now = deps.clock.now();
  const tokenHash = sha256(input.token);
  // An invitation's workspace and address never change, so read unlocked they name the lock to take.
  const [known] = await em.execute<{ workspace_id: string; email: string }[]>(
    'select workspace_id, email from invitations where token_hash = ?',
    [tokenHash],
  );
  if (known) await lockAddress(em, known.workspace_id, known.email);
  // A pending invitation always names its role (a check constraint): deleting the role revokes it.
  const [row] = await em.execute<{ id: string; workspace_id: string; email: string; role_id: string }[]>(
    `update invitations i set status = 'accepted', accepted_at = ?
      where token_hash = ? and status = 'pending' and expires_at > ?
        and not exists (select 1 from users u where u.workspace_id = i.workspace_id and u.email = i.email)
      returning id, workspace_id, email, role_id`,
    [now, tokenHash, now],
  );
  if (!row) throw await refuseInvitation(em, tokenHash, origin, now);
  em.setFilterParams('tenant', { workspaceId: row.workspace_id });
  // The role's row before the user's counter row (retire.ts, the lock order): the assignment's foreign
  // key takes this key-share lock anyway, but at COMMIT (it is deferred), long after the user's insert
  // wrote its counter row; an owner's lock, deactivation or deletion takes the owner role's row and then
  // that counter row.
  const [role] = await em.execute<{ id: string; key: string }[]>('select id, key from roles where id = ? for key share', [row.role_id]);
  if (!role) throw new AppError('INTERNAL', "The invitation's role was not found");
  // The emailed one-time link proves the address.
  const user = await newUser(row.workspace_id, { email: row.email, password: input.password, name: input.name, email_verified: true });
  em.persist(user);
  const scope: AuditScope = { em, workspaceId: row.workspace_id, actor: { type: 'user', id: user.id }, ...origin };
  addAssignment(em, row.workspace_id, user.id, role.id, null);
  await em.nativeUpdate(Invitation, { id: row.id }, { userId: user.id });
  recordAudit(scope, { eventType: 'invitation.accept', target: { type: 'invitation', id: row.id } });
  recordAudit(scope, {
    eventType: 'user.create',
    target: { type: 'user', id: user.id },
    details: { email: user.email, via: 'invitation', role: role.key, role_id: role.id },
  });
  emitEvent(scope, 'invitation.accepted', { id: row.id, user_id: user.id, email: user.email });
  emitEvent(scope, 'user.created', {
    id: user.id,
    email: user.email,
    name: user.name,
    via: 'invitation',
    role: role.key,
    role_id: role.id,
  });
  await em.flush();
  return { workspaceId: row.workspace_id, userId: user.id };
}
