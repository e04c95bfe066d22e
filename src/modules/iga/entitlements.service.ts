import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../core/errors.ts';
import { isId } from '../../core/ids.ts';
import { isoOf } from '../../core/instant.ts';
import { offsetOf, toPage } from '../../core/pagination.ts';
import { Group, GroupMember } from '../groups/group.entity.ts';
import { Role, RoleAssignment } from '../roles/role.entity.ts';
import { lookupRole } from '../roles/roles.service.ts';
import type { EntitlementType } from './iga.entity.ts';
import { HOLDERS_SHOWN, type EntitlementView, type ListEntitlementsInput } from './iga.schema.ts';

export interface Entitlement {
  type: EntitlementType;
  id: string;
  name: string;
  /** The built-in owner role: only owners may grant or revoke it (roles/owners.ts). */
  owner: boolean;
}

/**
 * The role or group an entitlement id names in the caller's workspace, or null: a group's id, or a
 * role's id or key (`viewer`, a custom role's key), as `/api/v1/roles/assign` takes it (lookupRole).
 */
export async function lookupEntitlement(em: EntityManager, id: string): Promise<Entitlement | null> {
  if (isId('grp', id)) {
    const group = await em.findOne(Group, { id });
    return group ? { type: 'group', id: group.id, name: group.name, owner: false } : null;
  }
  const role = await lookupRole(em, id);
  return role ? { type: 'role', id: role.id, name: role.name, owner: role.builtin && role.key === 'owner' } : null;
}

export async function findEntitlement(em: EntityManager, id: string): Promise<Entitlement> {
  const entitlement = await lookupEntitlement(em, id);
  if (!entitlement) throw new AppError('NOT_FOUND', 'No such entitlement (a role id or key, or a group id)');
  return entitlement;
}

/** Whether the user holds the entitlement now, and until when (a role assignment may expire). */
export async function currentGrant(
  em: EntityManager,
  entitlement: Entitlement,
  userId: string,
  now: Date,
): Promise<{ expiresAt: Date | null } | null> {
  if (entitlement.type === 'role') {
    const assignment = await em.findOne(RoleAssignment, {
      userId,
      roleId: entitlement.id,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
    });
    return assignment ? { expiresAt: assignment.expiresAt } : null;
  }
  return (await em.count(GroupMember, { userId, groupId: entitlement.id })) > 0 ? { expiresAt: null } : null;
}

interface EntitlementRow {
  type: EntitlementType;
  id: string;
  name: string;
  key: string | null;
  description: string | null;
  holder_count: number;
  total: number;
}

interface HolderRow {
  entitlement_id: string;
  user_id: string;
  email: string;
  granted_at: Date | string;
  expires_at: Date | string | null;
}

/**
 * Every role and group of the workspace (roles first: owner, admin, viewer, member, then custom ones), each with how many hold it now
 * and who (the first HOLDERS_SHOWN, oldest grant first). Two statements per page, whatever its size.
 */
export async function listEntitlements(em: EntityManager, workspaceId: string, query: ListEntitlementsInput, now: Date) {
  const { limit, offset } = offsetOf(query);
  const rows = await em.execute<EntitlementRow[]>(
    `select e.*, count(*) over ()::int as total from (
       select 'role' as type, r.id, r.name, r.key, r.description, 0 as kind,
              case when r.builtin then array_position(array['owner', 'admin', 'viewer', 'member'], r.key) else 100 end as rank, r.created_at,
              (select count(*) from role_assignments ra where ra.role_id = r.id and (ra.expires_at is null or ra.expires_at > ?))::int as holder_count
         from roles r where r.workspace_id = ? and ?::text in ('all', 'role')
       union all
       select 'group', g.id, g.name, null, g.description, 1, 0, g.created_at,
              (select count(*) from group_members gm where gm.group_id = g.id)::int
         from groups g where g.workspace_id = ? and ?::text in ('all', 'group')
     ) e order by e.kind, e.rank, e.created_at, e.id limit ? offset ?`,
    [now, workspaceId, query.type ?? 'all', workspaceId, query.type ?? 'all', limit, offset],
  );
  const ids = rows.map((r) => r.id);
  const holders =
    ids.length === 0
      ? []
      : await em.execute<HolderRow[]>(
          `select entitlement_id, user_id, email, granted_at, expires_at from (
             select h.*, row_number() over (partition by h.entitlement_id order by h.granted_at, h.user_id) as n from (
               select ra.role_id as entitlement_id, u.id as user_id, u.email, ra.created_at as granted_at, ra.expires_at
                 from role_assignments ra join users u on u.id = ra.user_id
                where ra.workspace_id = ? and ra.role_id in (?) and (ra.expires_at is null or ra.expires_at > ?)
               union all
               select gm.group_id, u.id, u.email, gm.created_at, null
                 from group_members gm join users u on u.id = gm.user_id
                where gm.workspace_id = ? and gm.group_id in (?)
             ) h
           ) ranked where n <= ? order by entitlement_id, n`,
          [workspaceId, ids, now, workspaceId, ids, HOLDERS_SHOWN],
        );
  const data: EntitlementView[] = rows.map((row) => ({
    id: row.id,
    type: row.type,
    name: row.name,
    key: row.key,
    description: row.description,
    holder_count: row.holder_count,
    holders: holders
      .filter((h) => h.entitlement_id === row.id)
      .map((h) => ({
        user_id: h.user_id,
        email: h.email,
        granted_at: isoOf(h.granted_at),
        expires_at: h.expires_at ? isoOf(h.expires_at) : null,
      })),
  }));
  const total = rows[0]?.total ?? (offset > 0 ? await countEntitlements(em, query) : 0);
  return toPage(data, total, query);
}

async function countEntitlements(em: EntityManager, query: ListEntitlementsInput): Promise<number> {
  const roles = query.type === 'group' ? 0 : await em.count(Role, {});
  const groups = query.type === 'role' ? 0 : await em.count(Group, {});
  return roles + groups;
}
