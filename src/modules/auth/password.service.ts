import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { hashPassword, verifyPassword } from '../../core/passwords.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { queueEmail } from '../email/outbox.ts';
import { emailTemplateFor } from '../email-templates/email-templates.service.ts';
import { accountLocked } from '../users/account-locked.ts';
import { User } from '../users/user.entity.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { PasswordResetToken } from './session.entity.ts';
import { endUserSessions, type Origin } from './sessions.service.ts';
import { emitEvent } from '../events/events.ts';
import { countFailure, expireLock, type LockableUser } from './lockout.ts';
import { writingAddedRows } from './sign-in.ts';
import { retirePendingChallenges } from '../mfa/challenge-retirement.ts';

export const RESET_TTL_MS = 30 * 60 * 1000;
/** At most one reset email per address per minute. */
export const RESET_EMAIL_INTERVAL_MS = 60 * 1000;

export const FORGOT_MESSAGE = 'If an account exists for this email, a link to reset its password is on its way.';

/**
 * Queues a reset link when the account exists and none was sent in the last minute. The answer never
 * says which happened; mail goes out after commit, so timing does not say it either.
 */
export async function forgotPassword(deps: AppDeps, em: EntityManager, workspaceId: string, email: string, origin: Origin) {
  const now = deps.clock.now();
  const user = await em.findOne(User, { email, status: { $ne: 'deactivated' } });
  const scope: AuditScope = { em, workspaceId, actor: { type: 'system', id: null }, ...origin };
  if (!user) {
    recordAudit(scope, { eventType: 'auth.password_forgot', outcome: 'failure', details: { reason: 'unknown_email', email } });
    return { queued: false };
  }
  // Concurrent requests for one address take turns here, so the check below sees the link a first one made.
  await em.execute('select id from users where id = ? for update', [user.id]);
  const recent = await em.count(PasswordResetToken, {
    userId: user.id,
    createdAt: { $gt: new Date(now.getTime() - RESET_EMAIL_INTERVAL_MS) },
  });
  if (recent > 0) {
    recordAudit(scope, {
      eventType: 'auth.password_forgot',
      outcome: 'failure',
      target: { type: 'user', id: user.id },
      details: { reason: 'throttled' },
    });
    return { queued: false };
  }
  const token = newSecret('', 32);
  em.persist(
    Object.assign(new PasswordResetToken(), {
      id: newId('prt'),
      workspaceId,
      userId: user.id,
      tokenHash: sha256(token),
      createdAt: now,
      expiresAt: new Date(now.getTime() + RESET_TTL_MS),
      usedAt: null,
    }),
  );
  const workspace = await em.findOneOrFail(Workspace, { id: workspaceId });
  queueEmail(
    em,
    {
      workspaceId,
      template: await emailTemplateFor(em, workspaceId, 'password_reset'),
      to: user.email,
      // BASE_URL, never the request's Host: a forged Host must not steer the link elsewhere.
      vars: {
        link: `${deps.config.BASE_URL}/reset-password?token=${encodeURIComponent(token)}`,
        workspace_name: workspace.name,
        expires_minutes: String(RESET_TTL_MS / 60_000),
      },
    },
    now,
  );
  recordAudit(scope, { eventType: 'auth.password_forgot', target: { type: 'user', id: user.id } });
  return { queued: true };
}

/**
 * The refusal of a reset token that cannot be used. A used or expired one still names its user, so
 * the attempt is audited (and kept); an unknown one names nobody.
 */
async function refuseDeadResetToken(em: EntityManager, token: string, origin: Origin, workspaceId: string | null): Promise<AppError> {
  const [dead] = await em.execute<{ user_id: string; workspace_id: string; used_at: string | null }[]>(
    'select user_id, workspace_id, used_at from password_reset_tokens where token_hash = ? and (?::text is null or workspace_id = ?)',
    [sha256(token), workspaceId, workspaceId],
  );
  if (dead) {
    recordAudit(
      { em, workspaceId: dead.workspace_id, actor: { type: 'user', id: dead.user_id }, ...origin },
      {
        eventType: 'auth.password_reset',
        outcome: 'failure',
        target: { type: 'user', id: dead.user_id },
        details: { reason: dead.used_at ? 'token_used' : 'token_expired' },
      },
    );
  }
  return new AppError('INVALID_TOKEN', 'The reset link is invalid, expired or already used', { keepChanges: dead !== undefined });
}

/**
 * The user's other reset links stop working once the password has changed (they were asked for the
 * old one) or an admin has moved the account to another email (they went to the old address).
 */
export async function retireResetLinks(em: EntityManager, userId: string, now: Date): Promise<void> {
  await em.execute('update password_reset_tokens set used_at = ? where user_id = ? and used_at is null and expires_at > ?', [
    now,
    userId,
    now,
  ]);
}

/**
 * Sets a new password with a reset token. The token is consumed by one conditional UPDATE (of many
 * concurrent uses, one wins); the password policy was checked before, so a refused password does
 * not burn the token. Every session of the user ends; a lockout is lifted.
 */
export async function resetPassword(
  deps: AppDeps,
  em: EntityManager,
  token: string,
  password: string,
  origin: Origin,
  workspaceId: string | null = null,
) {
  const now = deps.clock.now();
  const [consumed] = await em.execute<{ user_id: string; workspace_id: string }[]>(
    `update password_reset_tokens set used_at = ?
      where token_hash = ? and used_at is null and expires_at > ? and (?::text is null or workspace_id = ?)
      returning user_id, workspace_id`,
    [now, sha256(token), now, workspaceId, workspaceId],
  );
  if (!consumed) throw await refuseDeadResetToken(em, token, origin, workspaceId);
  em.setFilterParams('tenant', { workspaceId: consumed.workspace_id });
  const user = await em.findOne(User, { id: consumed.user_id, status: { $ne: 'deactivated' } });
  if (!user) throw new AppError('INVALID_TOKEN', 'The reset link is invalid, expired or already used');
  // A new password lifts a lockout after failed sign-ins; an admin's lock (no end time) stays.
  const lockedByAdmin = user.status === 'locked' && user.lockedUntil === null;
  const liftsLockout = user.status === 'locked' && !lockedByAdmin;
  Object.assign(user, {
    passwordHash: await hashPassword(password),
    updatedAt: now,
    failedLoginCount: 0,
    ...(lockedByAdmin ? {} : { lockedUntil: null, status: user.status === 'locked' ? 'active' : user.status }),
  });
  const ended = await endUserSessions({ em, workspaceId: user.workspaceId }, user.id, now, 'password_reset');
  await retireResetLinks(em, user.id, now);
  await retirePendingChallenges(em, user.id, now);
  recordAudit(
    { em, workspaceId: user.workspaceId, actor: { type: 'user', id: user.id }, ...origin },
    { eventType: 'auth.password_reset', target: { type: 'user', id: user.id }, details: { ended_sessions: ended } },
  );
  emitEvent({ em, workspaceId: user.workspaceId }, 'password.reset', { user_id: user.id, ended_sessions: ended });
  if (liftsLockout)
    emitEvent({ em, workspaceId: user.workspaceId }, 'user.updated', { id: user.id, email: user.email, changes: ['status'] });
  return { password_reset: true as const };
}

/**
 * Changes the caller's password after checking the current one; their other sessions end. A wrong
 * current password counts toward the lockout as a wrong sign-in does, and a locked account changes
 * nothing until the lock ends: otherwise a stolen access token could guess the password here
 * without limit.
 *
 * `em` is in no transaction (meta `ownTransaction`), so no connection is held while Argon2id checks
 * the current password and then hashes the new one (a wrong current password costs no second hash).
 * What must be atomic is: a wrong password's count (and lock) with its failure row; the new password
 * with the end of the other sessions, the retired reset links, the audit row and the event. The rows
 * added to `em` (a refusal's audit row, a lapsed lock's event) are written at the end, also when the
 * change is refused (`keepChanges`), as sign-in does.
 */
export function changePassword(
  deps: AppDeps,
  em: EntityManager,
  who: { userId: string; sessionId: string; workspaceId: string },
  input: { current_password: string; new_password: string },
  origin: Origin,
) {
  return writingAddedRows(em, async () => {
    const now = deps.clock.now();
    const user = await em.findOneOrFail(User, { id: who.userId }, { populate: ['passwordHash'] });
    const scope: AuditScope = { em, workspaceId: who.workspaceId, actor: { type: 'user', id: user.id }, ...origin };
    const refuse = (reason: string, error: AppError, extra: Record<string, unknown> = {}, at: EntityManager = em) => {
      recordAudit(
        { ...scope, em: at },
        { eventType: 'auth.password_change', outcome: 'failure', target: { type: 'user', id: user.id }, details: { reason, ...extra } },
      );
      return error;
    };
    const lockable: LockableUser = { id: user.id, email: user.email, status: user.status, lockedUntil: user.lockedUntil };
    await expireLock(em, who.workspaceId, lockable, now);
    if (lockable.status === 'locked') throw refuse('account_locked', accountLocked(lockable.lockedUntil));
    const currentHash = user.passwordHash;
    if (!currentHash || !(await verifyPassword(currentHash, input.current_password))) {
      throw await em.transactional(async (tx) => {
        const locked = await countFailure(tx, who.workspaceId, lockable, now);
        return refuse(
          'wrong_password',
          new AppError('INVALID_CREDENTIALS', 'The current password is incorrect', { keepChanges: true }),
          locked ? { account_locked: true } : {},
          tx,
        );
      });
    }
    const passwordHash = await hashPassword(input.new_password);
    return em.transactional(async (tx) => {
      const txScope: AuditScope = { ...scope, em: tx };
      // Only over the password just checked: a reset or another change since then made it no longer current.
      const changed = await tx.execute<{ id: string }[]>(
        'update users set password_hash = ?, failed_login_count = 0, updated_at = ? where id = ? and password_hash = ? returning id',
        [passwordHash, now, user.id, currentHash],
      );
      if (changed.length === 0) throw new AppError('INVALID_CREDENTIALS', 'The current password is incorrect');
      const ended = await endUserSessions(txScope, user.id, now, 'password_change', who.sessionId);
      await retireResetLinks(tx, user.id, now);
      await retirePendingChallenges(tx, user.id, now);
      recordAudit(txScope, {
        eventType: 'auth.password_change',
        target: { type: 'user', id: user.id },
        details: { ended_sessions: ended },
      });
      emitEvent(txScope, 'password.changed', { user_id: user.id, ended_sessions: ended });
      return { password_changed: true as const, ended_sessions: ended };
    });
  });
}
