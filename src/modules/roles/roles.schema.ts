import { z } from 'zod';
import { ALL_PERMISSIONS, type Permission } from '../../core/permissions.ts';
import { instantInput } from '../../core/instant.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { labelInput, searchInput } from '../../core/labels.ts';

export const roleOutput = z
  .object({
    id: z.string(),
    key: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    builtin: z.boolean(),
    permissions: z.array(z.string()),
    created_at: z.string(),
  })
  .meta({ id: 'Role' });
export type RoleView = z.infer<typeof roleOutput>;

export const rolePage = pageOf(roleOutput);
export const listRolesInput = z
  .object({ q: searchInput.describe("Part of the role's name or description, any case").optional(), ...pageParams })
  .prefault({});

const permission = z.enum(ALL_PERMISSIONS as [Permission, ...Permission[]]);

export const createRoleInput = z.strictObject({
  name: labelInput(100),
  key: z
    .string()
    .regex(/^[a-z][a-z0-9_-]{1,49}$/, 'must be 2–50 lower-case letters, digits, - or _, starting with a letter')
    .optional(),
  description: absentIfNull(z.string().trim().max(500)),
  permissions: z.array(permission).max(ALL_PERMISSIONS.length).default([]),
});
export type CreateRoleInput = z.infer<typeof createRoleInput>;

export const roleIdInput = z.object({ id: z.string().max(100) });
/** A custom role's new name, description (`null` clears it) or whole list of permissions; its key stays. */
export const updateRoleInput = z.strictObject({
  id: z.string().max(100),
  name: labelInput(100).optional(),
  description: z.string().trim().max(500).nullable().optional(),
  permissions: z.array(permission).max(ALL_PERMISSIONS.length).optional().describe('Replaces the whole list'),
});
export type UpdateRoleInput = z.infer<typeof updateRoleInput>;
export const roleIdsInput = z.object({ ids: z.array(z.string().max(100)).min(1).max(100) });

/** `role_id` is the role's id, or its key (`admin`, or a custom role's key). */
export const assignInput = z.strictObject({
  user_id: z.string().max(100),
  role_id: z.string().max(100),
  /** "Until a date" (core/instant.ts: with an offset, without one read as UTC, or a bare date). */
  expires_at: instantInput.nullable().optional(),
});
export const revokeInput = z.strictObject({ user_id: z.string().max(100), role_id: z.string().max(100) });

export const assignmentOutput = z
  .object({
    user_id: z.string(),
    role_id: z.string(),
    role: roleOutput,
    expires_at: z.string().nullable(),
    assigned_at: z.string(),
  })
  .meta({ id: 'RoleAssignment' });
export type AssignmentView = z.infer<typeof assignmentOutput>;

/** One of a user's roles: the role itself (`id` is the role's), with when it was given and until when. */
export const userRoleOutput = roleOutput
  .extend({ role_id: z.string(), user_id: z.string(), expires_at: z.string().nullable(), assigned_at: z.string() })
  .meta({ id: 'UserRole' });
export type UserRoleView = z.infer<typeof userRoleOutput>;

export const userRolePage = pageOf(userRoleOutput);
export const userRolesInput = z.object({ id: z.string().max(100), ...pageParams });
