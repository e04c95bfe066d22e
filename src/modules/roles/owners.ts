import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../core/errors.ts';
import { Role, RoleAssignment } from './role.entity.ts';

/** Owner changes in a workspace happen one at a time: the owner role's row is the lock. */
export async function lockOwnerRole(em: EntityManager, role: Role): Promise<void> {
  await em.execute('select id from roles where id = ? for update', [role.id]);
}

/** Owners whose ownership has no end date, other than `exceptUserId`. */
export async function permanentOwners(em: EntityManager, ownerRoleId: string, exceptUserId: string): Promise<number> {
  return em.count(RoleAssignment, { roleId: ownerRoleId, expiresAt: null, userId: { $ne: exceptUserId } });
}

/**
 * Refuses (409) a change that would leave the workspace without an owner whose ownership has no end
 * date (an owner given an end date would otherwise be the last, and then none); takes the owner lock.
 */
export async function keepAnOwner(em: EntityManager, userId: string, now: Date): Promise<void> {
  const ownerRole = await em.findOne(Role, { key: 'owner', builtin: true });
  if (!ownerRole) return;
  const holds = await em.count(RoleAssignment, { userId, roleId: ownerRole.id, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
  if (holds === 0) return;
  await lockOwnerRole(em, ownerRole);
  if ((await permanentOwners(em, ownerRole.id, userId)) === 0) {
    throw new AppError('CONFLICT', 'The last owner cannot be removed; make someone else an owner first');
  }
}
