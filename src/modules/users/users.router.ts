import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { createUserInput, listUsersInput, updateUserInput, userIdInput, userOutput, userPage } from './users.schema.ts';
import { z } from 'zod';
import { factorSummary } from '../mfa/mfa.service.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { createUser, deleteUser, findUser, getUser, listUsers, updateUser } from './users.service.ts';

export const usersRouter = router({
  list: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/users', tags: ['users'], summary: 'List users', protect: true } })
    .input(listUsersInput)
    .output(userPage)
    .query(({ ctx, input }) => listUsers(ctx.deps.orm, ctx.workspaceId, input)),

  create: managementProcedure('users:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/users', tags: ['users'], summary: 'Create a user', protect: true },
      successStatus: 201,
    })
    .input(createUserInput)
    .output(userOutput)
    .mutation(({ ctx, input }) => createUser(auditScope(ctx), input)),

  get: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/users/{id}', tags: ['users'], summary: 'Get a user', protect: true } })
    .input(userIdInput)
    .output(userOutput)
    .query(({ ctx, input }) => getUser(ctx.deps.orm, ctx.workspaceId, input.id)),

  /** GraphQL only: the admin's view of a user's second factor. */
  mfaSummary: managementProcedure('users:read')
    .input(userIdInput)
    .output(z.object({ verified: z.number().int(), kinds: z.array(z.literal('totp')) }))
    .query(async ({ ctx, input }) => {
      const user = await findUser(ctx.em, input.id);
      return factorSummary(ctx.em, user.id);
    }),

  update: managementProcedure('users:write')
    .meta({
      openapi: { method: 'PATCH', path: '/api/v1/users/{id}', tags: ['users'], summary: 'Update a user (name, status)', protect: true },
    })
    .input(updateUserInput)
    .output(userOutput)
    .mutation(({ ctx, input }) => updateUser(auditScope(ctx), input, ctx.deps.clock.now())),

  delete: managementProcedure('users:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/users/{id}',
        tags: ['users'],
        summary: 'Delete a user (their sessions end at once)',
        protect: true,
      },
    })
    .input(userIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteUser(auditScope(ctx), input.id, ctx.deps.clock.now())),
});
