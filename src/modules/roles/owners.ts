import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { grants, grantsAll, type Grant, type Permission } from '../../core/permissions.ts';
import { Role, RoleAssignment } from './role.entity.ts';

/*
 * Who may change what about ownership and roles. The rules of the CONTRACT ("only an owner may grant
 * or revoke owner", "the last owner cannot be removed") and what they imply: nobody hands out more
 * than they hold, and what would take an owner's place (their email, the way into their account
 * through a reset) or remove one (deactivation, deletion) is for owners only.
 */

/** An owner of the workspace. An API key is not one: it acts with admin rights. */
export function isOwner(principal: Principal): boolean {
  return principal.type === 'user' && principal.roles.includes('owner');
}

/** The permissions of a role's list that `held` does not grant (`*` asks for every permission there is). */
export function permissionsBeyond(held: readonly Grant[], permissions: readonly string[]): string[] {
  return permissions.filter((p) => (p === '*' ? !grantsAll(held) : !grants(held, p as Permission)));
}

/**
 * Refuses (403) handing out `role` to someone, or taking it away: the owner role only by an owner, any
 * other only by a caller who holds every permission it grants (a custom role with `roles:write` alone
 * cannot give anyone `admin`, itself included, nor take `admin` from an admin; one with `iga:write`
 * cannot either, by approving a request or revoking a review item). Deleting a role takes it from
 * everyone who holds it, so it is judged as a revocation.
 */
export function assertMayGrant(principal: Principal, role: Role, verb: 'grant' | 'revoke' | 'delete' | 'change' = 'grant'): void {
  if (role.builtin && role.key === 'owner') {
    if (!isOwner(principal)) throw new AppError('FORBIDDEN', `Only an owner may ${verb} the owner role`);
    return;
  }
  const missing = permissionsBeyond(principal.grants, role.permissions);
  if (missing.length > 0) {
    throw new AppError(
      'FORBIDDEN',
      `You cannot ${verb} the role ${role.key}: it holds permissions you do not have (${missing.join(', ')})`,
    );
  }
}

/** Owner changes in a workspace happen one at a time: the owner role's row is the lock. */
export async function lockOwnerRole(em: EntityManager, role: Role): Promise<void> {
  await em.execute('select id from roles where id = ? for update', [role.id]);
}

/** Owners who can act (not deactivated) and whose ownership has no end date, other than `exceptUserId`. */
export async function permanentOwners(em: EntityManager, ownerRoleId: string, exceptUserId: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from role_assignments ra join users u on u.id = ra.user_id
      where ra.role_id = ? and ra.expires_at is null and ra.user_id <> ? and u.status <> 'deactivated'`,
    [ownerRoleId, exceptUserId],
  );
  return row?.n ?? 0;
}

/**
 * Guards a change to a user who is an owner now. `removes` (deactivation, deletion): refused with 409
 * when it would leave no active owner whose ownership has no end date (an owner given an end date would
 * otherwise be the last, and then none); takes the owner lock. Then, whatever the change, refused with
 * 403 unless the caller is an owner. A user who is not an owner passes untouched.
 */
export async function guardOwner(
  em: EntityManager,
  principal: Principal,
  userId: string,
  now: Date,
  change: { removes: boolean },
): Promise<void> {
  const ownerRole = await em.findOne(Role, { key: 'owner', builtin: true });
  if (!ownerRole) return;
  const holds = await em.count(RoleAssignment, { userId, roleId: ownerRole.id, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
  if (holds === 0) return;
  if (change.removes) {
    await lockOwnerRole(em, ownerRole);
    if ((await permanentOwners(em, ownerRole.id, userId)) === 0) {
      throw new AppError('CONFLICT', 'The last owner cannot be removed; make someone else an owner first');
    }
  }
  if (!isOwner(principal)) {
    throw new AppError('FORBIDDEN', "Only an owner may change an owner's email, deactivate an owner or delete one");
  }
}

/**
 * Refuses (403) taking over or removing a user who holds permissions the caller does not: changing
 * their email (the way into their account through a reset), deactivating, locking or deleting them. A
 * custom role with `users:write` manages members and its peers, never an admin; an admin (every
 * permission) manages everyone but owners, whom `guardOwner` keeps for owners.
 */
export async function guardOutranked(em: EntityManager, principal: Principal, userId: string, now: Date): Promise<void> {
  if (grantsAll(principal.grants)) return;
  const rows = await em.execute<{ permissions: Grant[] }[]>(
    `select r.permissions from role_assignments ra join roles r on r.id = ra.role_id
      where ra.user_id = ? and (ra.expires_at is null or ra.expires_at > ?)`,
    [userId, now],
  );
  const missing = new Set(rows.flatMap((row) => permissionsBeyond(principal.grants, row.permissions)));
  if (missing.size > 0) {
    throw new AppError(
      'FORBIDDEN',
      `This user holds permissions you do not have (${[...missing].join(', ')}): you cannot change their email, deactivate, lock or delete them`,
    );
  }
}
