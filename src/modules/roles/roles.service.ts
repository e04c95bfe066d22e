import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { sha256 } from '../../core/secrets.ts';
import { likePattern, offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { revokeInvitationsOfRole } from '../invitations/invitations.service.ts';
import { organizationsGrantingRole } from '../organizations/organizations.service.ts';
import { findUser } from '../users/users.service.ts';
import { BUILTIN_ROLES, type BuiltinRoleKey } from './builtin-roles.ts';
import { assertMayGrant, lockOwnerRole, permanentOwners } from './owners.ts';
import { lapseAssignment, tellLapsed } from './lapses.ts';
import { Role, RoleAssignment } from './role.entity.ts';
import type { AssignmentView, CreateRoleInput, RoleView, UpdateRoleInput, UserRoleView } from './roles.schema.ts';
import { emitEvent } from '../events/events.ts';
import { denyOrphanedRequests } from '../iga/close-requests.ts';
import { uniqueViolationNaming } from '../../core/unique-conflicts.ts';
import { takenConflict } from '../../core/conflicts.ts';

export function toRoleView(role: Role): RoleView {
  return {
    id: role.id,
    key: role.key,
    name: role.name,
    description: role.description,
    builtin: role.builtin,
    permissions: role.permissions,
    created_at: role.createdAt.toISOString(),
  };
}

function toAssignmentView(assignment: RoleAssignment, role: Role): AssignmentView {
  return {
    user_id: assignment.userId,
    role_id: role.id,
    role: toRoleView(role),
    expires_at: assignment.expiresAt?.toISOString() ?? null,
    assigned_at: assignment.createdAt.toISOString(),
  };
}

/** Roles, built-ins first then by creation; `q` keeps those whose name or description holds it, in any case. */
export async function listRoles(em: EntityManager, query: PageQuery & { q?: string }) {
  const pattern = query.q ? likePattern(query.q) : null;
  const where = pattern ? { $or: [{ name: { $ilike: pattern } }, { description: { $ilike: pattern } }] } : {};
  const [roles, total] = await em.findAndCount(Role, where, {
    orderBy: { builtin: 'desc', createdAt: 'asc', id: 'asc' },
    ...offsetOf(query),
  });
  return toPage(roles.map(toRoleView), total, query);
}

/** Live holders per role, in one statement for a page of roles; ids of no role of this workspace count 0. */
export async function roleMemberCounts(em: EntityManager, workspaceId: string, roleIds: string[], now: Date) {
  const ids = [...new Set(roleIds)];
  const rows = await em.execute<{ role_id: string; members: number }[]>(
    `select role_id, count(*)::int as members from role_assignments
      where workspace_id = ? and role_id in (?) and (expires_at is null or expires_at > ?) group by role_id`,
    [workspaceId, ids, now],
  );
  const counts = new Map(rows.map((row) => [row.role_id, row.members]));
  return ids.map((id) => ({ role_id: id, members: counts.get(id) ?? 0 }));
}

/** A role by its id, or by its key (`admin`, a custom role's key): keys are unique in a workspace. Null when none is. */
export async function lookupRole(em: EntityManager, idOrKey: string): Promise<Role | null> {
  return isId('rol', idOrKey) ? em.findOne(Role, { id: idOrKey }) : em.findOne(Role, { key: idOrKey });
}

/** A role by its id or key (lookupRole), or NOT_FOUND. */
export async function findRole(em: EntityManager, idOrKey: string): Promise<Role> {
  const role = await lookupRole(em, idOrKey);
  if (!role) throw new AppError('NOT_FOUND', 'No such role');
  return role;
}

/**
 * The key of a role created without one, made from its name: its letters and digits in lower-case
 * ASCII (accents dropped, so "Équipe" is `equipe`), words joined by `-`, starting with a letter. A
 * name holding letters or digits that ASCII cannot spell (日本語, Бухгалтерия) also gets a short
 * digest of the name, else every such name made the same key (`role-`) and only one could exist. The
 * same name in any case still makes the same key, so its duplicate is still 409.
 */
function keyFromName(name: string): string {
  const folded = name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  const words = folded.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const base = /^[a-z]/.test(words) ? words : `role-${words}`;
  const trimmed = (key: string, max: number) => key.slice(0, max).replace(/-+$/, '');
  if (!/[\p{L}\p{N}]/u.test(folded.replace(/[a-z0-9]/g, ''))) return trimmed(base, 50);
  return `${trimmed(base, 41)}-${sha256(name.normalize('NFC').toLowerCase()).slice(0, 8)}`;
}

export async function createRole(scope: AuditScope, input: CreateRoleInput, now: Date): Promise<RoleView> {
  const key = input.key ?? keyFromName(input.name);
  // The member the caller sent: a key made from the name is taken because of the name.
  const sent = input.key === undefined ? 'name' : 'key';
  if (key in BUILTIN_ROLES || (await scope.em.count(Role, { key })) > 0) {
    throw takenConflict(sent, `A role with the key "${key}" already exists`);
  }
  const role = Object.assign(new Role(), {
    id: newId('rol'),
    workspaceId: scope.workspaceId,
    key,
    name: input.name,
    description: input.description ?? null,
    builtin: false,
    permissions: [...new Set(input.permissions)],
    createdAt: now,
  });
  scope.em.persist(role);
  recordAudit(scope, { eventType: 'role.create', target: { type: 'role', id: role.id }, details: { key, permissions: role.permissions } });
  // Flushed here, so a create that lost a race past the check above names the member it sent too.
  try {
    await scope.em.flush();
  } catch (error) {
    throw uniqueViolationNaming(error, 'roles_workspace_id_key_unique', sent) ?? error;
  }
  return toRoleView(role);
}

export async function getRole(em: EntityManager, idOrKey: string): Promise<RoleView> {
  return toRoleView(await findRole(em, idOrKey));
}

/**
 * Renames a custom role, or changes its description or permissions; its key stays. Changing the
 * permissions changes what every holder may do at once (they are read live), so it follows the rule
 * of granting: the caller holds every permission the role grants before and after.
 */
export async function updateRole(scope: AuditScope, principal: Principal, input: UpdateRoleInput): Promise<RoleView> {
  const role = await findRole(scope.em, input.id);
  if (role.builtin) throw new AppError('CONFLICT', 'Built-in roles cannot be changed');
  const changed: string[] = [];
  if (input.permissions !== undefined) {
    const permissions = [...new Set(input.permissions)];
    assertMayGrant(principal, role, 'change');
    assertMayGrant(principal, Object.assign(new Role(), { ...role, permissions }), 'change');
    if (permissions.length !== role.permissions.length || permissions.some((p) => !role.permissions.includes(p))) {
      role.permissions = permissions;
      changed.push('permissions');
    }
  }
  if (input.name !== undefined && input.name !== role.name) {
    role.name = input.name;
    changed.push('name');
  }
  if (input.description !== undefined && input.description !== role.description) {
    role.description = input.description;
    changed.push('description');
  }
  if (changed.length > 0) {
    recordAudit(scope, {
      eventType: 'role.update',
      target: { type: 'role', id: role.id },
      details: { key: role.key, changed, permissions: role.permissions },
    });
  }
  return toRoleView(role);
}

/**
 * Deletes a custom role, for a caller who could take it from its holders one by one (`assertMayGrant`):
 * its assignments go (each user who held it is told `role.revoked`, as when it
 * is taken from them one at a time; an assignment that had expired and was not yet told of is told as
 * its lapse, as the background round would have), its pending invitations are revoked (audited one by
 * one), and the other invitations that carried it keep their row without it.
 */
export async function deleteRole(scope: AuditScope, principal: Principal, id: string, now: Date) {
  const role = await findRole(scope.em, id);
  if (role.builtin) throw new AppError('CONFLICT', 'Built-in roles cannot be deleted');
  assertMayGrant(principal, role, 'delete');
  const granting = await organizationsGrantingRole(scope.em, scope.workspaceId, role.key);
  if (granting.length > 0) {
    throw new AppError('CONFLICT', 'Organizations give this role to their new SSO users; choose another default role there first', {
      details: granting.map((org) => ({ path: 'id', message: `${org.name} (${org.id}) has it as sso.default_role` })),
    });
  }
  const revokedInvitations = await revokeInvitationsOfRole(scope, role, now);
  const deniedRequests = await denyOrphanedRequests(scope, { entitlementId: role.id }, 'The role was deleted', now);
  const removed = await scope.em.execute<{ user_id: string; expires_at: Date | string | null }[]>(
    'delete from role_assignments where workspace_id = ? and role_id = ? returning user_id, expires_at',
    [scope.workspaceId, role.id],
  );
  for (const held of removed) {
    if (held.expires_at !== null && new Date(held.expires_at) <= now) {
      tellLapsed(scope.em, {
        workspace_id: scope.workspaceId,
        user_id: held.user_id,
        role_id: role.id,
        role: role.key,
        expires_at: held.expires_at,
      });
    } else {
      emitEvent(scope, 'role.revoked', { user_id: held.user_id, role_id: role.id, role: role.key, reason: 'role_deleted' });
    }
  }
  scope.em.remove(role);
  recordAudit(scope, {
    eventType: 'role.delete',
    target: { type: 'role', id: role.id },
    details: { key: role.key, revoked_invitations: revokedInvitations, denied_requests: deniedRequests },
  });
  return { id: role.id, deleted: true as const };
}

/**
 * The assignment of `roleId` to `userId`, created or given the new `expiresAt`, in one statement: of
 * concurrent assignments of the same pair, one inserts and the others wait for it, then update, so
 * each answers as a repeated assignment does (a find-then-insert let the unique index refuse them).
 * An expired assignment given again is a new grant: its `created_at` (shown as `assigned_at`) becomes now.
 * `change` says what the statement changed: `granted` (the user did not hold the role: no row, or an
 * expired one), `expires_at` (held, until another time), or `none` (the same assignment again, or one a
 * concurrent assignment made first, unseen by this statement's snapshot).
 */
async function upsertAssignment(scope: AuditScope, userId: string, roleId: string, expiresAt: Date | null, now: Date) {
  const [row] = await scope.em.execute<
    { id: string; expires_at: string | null; created_at: string; inserted: boolean; prior_seen: boolean; prior_expires_at: string | null }[]
  >(
    `with prior as (select expires_at from role_assignments where user_id = ? and role_id = ?)
     insert into role_assignments (id, workspace_id, user_id, role_id, expires_at, created_at) values (?, ?, ?, ?, ?, ?)
      on conflict (user_id, role_id) do update set expires_at = excluded.expires_at,
        created_at = case when role_assignments.expires_at <= excluded.created_at then excluded.created_at else role_assignments.created_at end
     returning id, expires_at, created_at, (xmax = 0) as inserted,
               exists (select 1 from prior) as prior_seen, (select expires_at from prior) as prior_expires_at`,
    [userId, roleId, newId('ras'), scope.workspaceId, userId, roleId, expiresAt, now],
  );
  if (!row) throw new AppError('INTERNAL', 'The role assignment was not written');
  const prior = row.prior_seen ? { expiresAt: row.prior_expires_at === null ? null : new Date(row.prior_expires_at) } : null;
  const change = assignmentChange(row.inserted, prior, expiresAt, now);
  const assignment = Object.assign(new RoleAssignment(), {
    id: row.id,
    workspaceId: scope.workspaceId,
    userId,
    roleId,
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at),
    createdAt: new Date(row.created_at),
  });
  return { assignment, change };
}

type AssignmentChange = 'granted' | 'expires_at' | 'none';

/** What an assignment changed, from the row it found (`prior`, null when it saw none) and what it wrote. */
function assignmentChange(
  inserted: boolean,
  prior: { expiresAt: Date | null } | null,
  expiresAt: Date | null,
  now: Date,
): AssignmentChange {
  if (inserted) return 'granted';
  if (!prior) return 'none';
  if (prior.expiresAt !== null && prior.expiresAt <= now) return 'granted';
  return (prior.expiresAt?.getTime() ?? null) === (expiresAt?.getTime() ?? null) ? 'none' : 'expires_at';
}

export async function assignRole(
  scope: AuditScope,
  principal: Principal,
  input: { user_id: string; role_id: string; expires_at?: string | null },
  now: Date,
): Promise<{ assignment: AssignmentView; granted: boolean }> {
  const user = await findUser(scope.em, input.user_id);
  const role = await findRole(scope.em, input.role_id);
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt <= now)
    throw new AppError('BAD_REQUEST', 'expires_at must be in the future', {
      details: [{ path: 'expires_at', message: 'must be in the future' }],
    });
  assertMayGrant(principal, role);
  const ownerRole = (role.key as BuiltinRoleKey) === 'owner' && role.builtin;
  if (ownerRole) await lockOwnerRole(scope.em, role);
  // A grant that expired and was not yet told of ends first (role.revoked, reason expired): this is a new one.
  await lapseAssignment(scope.em, user.id, role.id, now);
  if (ownerRole) {
    const held = (await scope.em.count(RoleAssignment, { userId: user.id, roleId: role.id })) > 0;
    if (held && expiresAt && (await permanentOwners(scope.em, role.id, user.id)) === 0) {
      throw new AppError('CONFLICT', 'The last owner cannot be given an end date; make someone else an owner first');
    }
  }
  const { assignment, change } = await upsertAssignment(scope, user.id, role.id, expiresAt, now);
  recordAudit(scope, {
    eventType: 'role.assign',
    target: { type: 'user', id: user.id },
    details: { role_id: role.id, role: role.key, expires_at: expiresAt?.toISOString() ?? null, change },
  });
  // Subscribers hear of a change only: the same assignment posted again tells them nothing new.
  if (change !== 'none') {
    emitEvent(scope, 'role.assigned', { user_id: user.id, role_id: role.id, role: role.key, expires_at: expiresAt?.toISOString() ?? null });
  }
  return { assignment: toAssignmentView(assignment, role), granted: change === 'granted' };
}

/**
 * Takes a role from a user who holds it. An assignment that has expired grants nothing any more, so
 * it is answered as a role the user never had: 404, nothing revoked and no `role.revoked` event (its
 * lapse is told by roles/lapses.ts). The assignment is read `for update`: a lapse deleting it at the
 * same moment either waits for this revoke (and then finds nothing) or makes it find nothing, so one
 * `role.revoked` is told, never two.
 */
export async function revokeRole(scope: AuditScope, principal: Principal, input: { user_id: string; role_id: string }, now: Date) {
  const user = await findUser(scope.em, input.user_id);
  const role = await findRole(scope.em, input.role_id);
  const ownerRole = role.builtin && role.key === 'owner';
  if (ownerRole) await lockOwnerRole(scope.em, role);
  const found = await scope.em.findOne(RoleAssignment, { userId: user.id, roleId: role.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const assignment = found && (found.expiresAt === null || found.expiresAt > now) ? found : null;
  // The last owner answers 409 whoever asks (the CONTRACT's rule), as deletion and deactivation do
  // (guardOwner); only then is a caller refused who could not grant the role (an owner for owner).
  if (ownerRole && assignment && (await permanentOwners(scope.em, role.id, user.id)) === 0) {
    throw new AppError('CONFLICT', 'The last owner cannot be removed; make someone else an owner first');
  }
  assertMayGrant(principal, role, 'revoke');
  if (!assignment) throw new AppError('NOT_FOUND', 'This user does not hold this role');
  scope.em.remove(assignment);
  recordAudit(scope, { eventType: 'role.revoke', target: { type: 'user', id: user.id }, details: { role_id: role.id, role: role.key } });
  emitEvent(scope, 'role.revoked', { user_id: user.id, role_id: role.id, role: role.key });
  return { user_id: user.id, role_id: role.id, revoked: true as const };
}

/** A user's live roles, a page at a time (an expired assignment is gone from the second it expires). */
export async function userRoles(em: EntityManager, query: PageQuery & { id: string }, now: Date) {
  const user = await findUser(em, query.id);
  const [assignments, total] = await em.findAndCount(
    RoleAssignment,
    { userId: user.id, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] },
    { orderBy: { createdAt: 'asc', id: 'asc' }, ...offsetOf(query) },
  );
  const roles = await em.find(Role, { id: { $in: assignments.map((a) => a.roleId) } });
  const byId = new Map(roles.map((r) => [r.id, r]));
  const data = assignments.flatMap((a): UserRoleView[] => {
    const role = byId.get(a.roleId);
    if (!role) return [];
    const { expires_at, assigned_at } = toAssignmentView(a, role);
    return [{ ...toRoleView(role), role_id: role.id, user_id: a.userId, expires_at, assigned_at }];
  });
  return toPage(data, total, query);
}
