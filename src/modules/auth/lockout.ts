import type { EntityManager } from '@mikro-orm/postgresql';
import { emitEvent } from '../events/events.ts';
import type { UserStatus } from '../users/user.entity.ts';

/**
 * Ten wrong passwords in a row lock the account for fifteen minutes (CONTRACT), wherever the
 * password is typed: at sign-in and as the current password of a change.
 */
export const LOCK_AFTER_FAILURES = 10;
export const LOCK_MS = 15 * 60 * 1000;

/** What the lockout reads of a user; `status` and `lockedUntil` are kept current by `expireLock`. */
export interface LockableUser {
  id: string;
  email: string;
  status: UserStatus;
  lockedUntil: Date | null;
}

/** A lockout's start or end changes the user's status, as an admin's lock does: `user.updated` tells so. */
function emitStatusChange(em: EntityManager, workspaceId: string, user: LockableUser, now: Date): void {
  emitEvent({ em, workspaceId }, 'user.updated', { id: user.id, email: user.email, changes: ['status'] }, now);
}

/** Lifts a lock whose fifteen minutes have passed, before the password is judged. */
export async function expireLock(em: EntityManager, workspaceId: string, user: LockableUser, now: Date): Promise<void> {
  if (user.status !== 'locked' || !user.lockedUntil || user.lockedUntil > now) return;
  const lifted = await em.execute<{ id: string }[]>(
    `update users set status = 'active', failed_login_count = 0, locked_until = null
      where id = ? and status = 'locked' and locked_until <= ? returning id`,
    [user.id, now],
  );
  Object.assign(user, { status: 'active', lockedUntil: null });
  if (lifted.length > 0) emitStatusChange(em, workspaceId, user, now);
}

/**
 * Counts a wrong password in one statement (concurrent failures all count) and locks at the tenth;
 * the statement that locks (it read the row as `active`) tells of it.
 */
export async function countFailure(em: EntityManager, workspaceId: string, user: LockableUser, now: Date): Promise<boolean> {
  const until = new Date(now.getTime() + LOCK_MS);
  const [row] = await em.execute<{ was: string; status: string }[]>(
    `with prior as (select id, status from users where id = ? for update)
     update users u set failed_login_count = u.failed_login_count + 1,
            status = case when u.status = 'active' and u.failed_login_count + 1 >= ? then 'locked' else u.status end,
            locked_until = case when u.status = 'active' and u.failed_login_count + 1 >= ? then ? else u.locked_until end
       from prior where u.id = prior.id
     returning prior.status as was, u.status`,
    [user.id, LOCK_AFTER_FAILURES, LOCK_AFTER_FAILURES, until],
  );
  const locked = row?.was === 'active' && row.status === 'locked';
  if (locked) emitStatusChange(em, workspaceId, user, now);
  return locked;
}
