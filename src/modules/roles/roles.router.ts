import { z } from 'zod';
import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  assignInput,
  assignmentOutput,
  createRoleInput,
  listRolesInput,
  revokeInput,
  roleIdInput,
  updateRoleInput,
  roleIdsInput,
  roleOutput,
  rolePage,
  userRolePage,
  userRolesInput,
} from './roles.schema.ts';
import {
  assignRole,
  createRole,
  deleteRole,
  getRole,
  listRoles,
  revokeRole,
  roleMemberCounts,
  updateRole,
  userRoles,
} from './roles.service.ts';

const tags = ['roles'];

export const rolesRouter = router({
  list: managementProcedure('roles:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/roles', tags, summary: 'List roles (built-in and custom)', protect: true } })
    .input(listRolesInput)
    .output(rolePage)
    .query(({ ctx, input }) => listRoles(ctx.em, input)),

  /** GraphQL only: how many users hold each role now (expired assignments not counted), for the reports' dataloader. */
  memberCounts: managementProcedure('roles:read')
    .input(roleIdsInput)
    .output(z.array(z.object({ role_id: z.string(), members: z.number().int() })))
    .query(({ ctx, input }) => roleMemberCounts(ctx.em, ctx.workspaceId, input.ids, ctx.deps.clock.now())),

  create: managementProcedure('roles:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/roles', tags, summary: 'Create a custom role', protect: true },
      successStatus: 201,
      audit: 'role.create',
      conflict: 'A role with this key already exists',
    })
    .input(createRoleInput)
    .output(roleOutput)
    .mutation(({ ctx, input }) => createRole(auditScope(ctx), input, ctx.deps.clock.now())),

  get: managementProcedure('roles:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/roles/{id}', tags, summary: 'Get a role (by id or key)', protect: true } })
    .input(roleIdInput)
    .output(roleOutput)
    .query(({ ctx, input }) => getRole(ctx.em, input.id)),

  update: managementProcedure('roles:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/roles/{id}',
        tags,
        summary: "Rename a custom role, or change its description or permissions (its holders' access changes at once)",
        protect: true,
      },
      audit: 'role.update',
      conflict: 'Built-in roles cannot be changed',
    })
    .input(updateRoleInput)
    .output(roleOutput)
    .mutation(({ ctx, input }) => updateRole(auditScope(ctx), ctx.principal, input)),

  delete: managementProcedure('roles:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/roles/{id}', tags, summary: 'Delete a custom role', protect: true },
      audit: 'role.delete',
      conflict: 'Built-in roles cannot be deleted, nor a role an organization gives its new SSO users',
    })
    .input(roleIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteRole(auditScope(ctx), ctx.principal, input.id, ctx.deps.clock.now())),

  assign: managementProcedure('roles:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/roles/assign',
        tags,
        summary: 'Give a user a role, optionally until expires_at (201 for a new grant, 200 when the user held it: its end is updated)',
        protect: true,
      },
      mayCreate: true,
      audit: 'role.assign',
      bodyIds: ['user_id', 'role_id'],
      targetInBody: { collection: 'users', members: ['user_id'] },
      conflict: 'The last owner cannot be given an end date',
    })
    .input(assignInput)
    .output(assignmentOutput)
    .mutation(async ({ ctx, input }) => {
      const { assignment, granted } = await assignRole(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now());
      if (granted) ctx.success.status = 201;
      return assignment;
    }),

  revoke: managementProcedure('roles:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/roles/revoke', tags, summary: 'Take a role away', protect: true },
      audit: 'role.revoke',
      bodyIds: ['user_id', 'role_id'],
      targetInBody: { collection: 'users', members: ['user_id'] },
      conflict: 'The last owner cannot be removed',
    })
    .input(revokeInput)
    .output(z.object({ user_id: z.string(), role_id: z.string(), revoked: z.literal(true) }))
    .mutation(({ ctx, input }) => revokeRole(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),

  ofUser: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/{id}/roles', tags: ['users'], summary: "A user's live roles", protect: true } })
    .input(userRolesInput)
    .output(userRolePage)
    .query(({ ctx, input }) => userRoles(ctx.em, input, ctx.deps.clock.now())),
});
