import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.ts';
import { READ_PERMISSIONS, type Grant } from '../../core/permissions.ts';
import { Role, RoleAssignment } from './role.entity.ts';

export type BuiltinRoleKey = 'owner' | 'admin' | 'viewer' | 'member';

/**
 * The four roles every workspace starts with. owner and admin may do everything; viewer reads. Their
 * names are the CONTRACT's identifiers (`owner`, `admin`, …), the same as their keys, so a client that
 * looks a role up by name finds it.
 */
export const BUILTIN_ROLES: Record<BuiltinRoleKey, { name: string; description: string; permissions: Grant[] }> = {
  owner: { name: 'owner', description: 'Full control, including granting ownership', permissions: ['*'] },
  admin: { name: 'admin', description: 'Manages everything in the workspace', permissions: ['*'] },
  viewer: { name: 'viewer', description: 'Reads everything except vault secret values', permissions: READ_PERMISSIONS },
  member: { name: 'member', description: 'Signs in and manages their own account', permissions: [] },
};

export function seedBuiltinRoles(em: EntityManager, workspaceId: string): Map<BuiltinRoleKey, Role> {
  const now = new Date();
  const roles = new Map<BuiltinRoleKey, Role>();
  for (const [key, def] of Object.entries(BUILTIN_ROLES) as [BuiltinRoleKey, (typeof BUILTIN_ROLES)[BuiltinRoleKey]][]) {
    const role = Object.assign(new Role(), {
      id: newId('rol'),
      workspaceId,
      key,
      name: def.name,
      description: def.description,
      builtin: true,
      permissions: def.permissions,
      createdAt: now,
    });
    em.persist(role);
    roles.set(key, role);
  }
  return roles;
}

export function addAssignment(
  em: EntityManager,
  workspaceId: string,
  userId: string,
  roleId: string,
  expiresAt: Date | null = null,
): RoleAssignment {
  const assignment = Object.assign(new RoleAssignment(), {
    id: newId('ras'),
    workspaceId,
    userId,
    roleId,
    expiresAt,
    createdAt: new Date(),
  });
  em.persist(assignment);
  return assignment;
}
