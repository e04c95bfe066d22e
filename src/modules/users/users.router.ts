import { assertPasswordAllowed } from '../auth/password-policy.ts';
import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { createUserInput, listUsersInput, updateUserInput, userIdInput, userOutput, userPage } from './users.schema.ts';
import { userRelations, userRelationsInput, userRelationsOutput } from './user-relations.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { createUser, deleteUser, getUser, listUsers, updateUser } from './users.service.ts';

export const usersRouter = router({
  list: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/users', tags: ['users'], summary: 'List users', protect: true } })
    .input(listUsersInput)
    .output(userPage)
    .query(({ ctx, input }) => listUsers(ctx.deps.orm, ctx.workspaceId, input, ctx.deps.clock.now())),

  create: managementProcedure('users:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/users', tags: ['users'], summary: 'Create a user', protect: true },
      successStatus: 201,
      audit: 'user.create',
      hashes: ['password'],
      conflict: 'A user with this email already exists',
    })
    .input(createUserInput)
    .output(userOutput)
    .mutation(({ ctx, input }) => {
      assertPasswordAllowed(ctx.deps.config, input.password, 'password');
      return createUser(auditScope(ctx), input, ctx.deps.clock.now());
    }),

  get: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/{id}', tags: ['users'], summary: 'Get a user', protect: true } })
    .input(userIdInput)
    .output(userOutput)
    .query(({ ctx, input }) => getUser(ctx.deps.orm, ctx.workspaceId, input.id, ctx.deps.clock.now())),

  /** GraphQL only: roles, groups and factor counts of a page of users, for the reports' dataloader. */
  relations: managementProcedure('users:read')
    .input(userRelationsInput)
    .output(userRelationsOutput)
    .query(({ ctx, input }) => userRelations(ctx.em, ctx.workspaceId, input.ids, ctx.deps.clock.now())),

  update: managementProcedure('users:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/users/{id}',
        tags: ['users'],
        summary: 'Update a user (name, email, email_verified, status, metadata)',
        protect: true,
      },
      audit: 'user.update',
      conflict: 'Another user has this email, or the last owner would be deactivated',
    })
    .input(updateUserInput)
    .output(userOutput)
    .mutation(({ ctx, input }) => updateUser(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),

  delete: managementProcedure('users:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/users/{id}',
        tags: ['users'],
        summary: 'Delete a user (their sessions end at once)',
        protect: true,
      },
      audit: 'user.delete',
      conflict: 'The last owner cannot be deleted',
    })
    .input(userIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteUser(auditScope(ctx), ctx.principal, input.id, ctx.deps.clock.now())),
});
