import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  applicationIdInput,
  applicationOutput,
  applicationPage,
  applicationWithSecretOutput,
  createApplicationInput,
  listApplicationsInput,
  updateApplicationInput,
} from './applications.schema.ts';
import {
  createApplication,
  deleteApplication,
  getApplication,
  listApplications,
  rotateSecret,
  updateApplication,
} from './applications.service.ts';

const tags = ['applications'];

export const applicationsRouter = router({
  list: managementProcedure('applications:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/applications', tags, summary: 'List applications (OAuth clients)', protect: true } })
    .input(listApplicationsInput)
    .output(applicationPage)
    .query(({ ctx, input }) => listApplications(ctx.em, input)),

  get: managementProcedure('applications:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/applications/{id}', tags, summary: 'Get an application', protect: true } })
    .input(applicationIdInput)
    .output(applicationOutput)
    .query(({ ctx, input }) => getApplication(ctx.em, input.id)),

  create: managementProcedure('applications:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/applications',
        tags,
        summary: 'Register an application; a web or m2m application’s client secret is shown this once',
        protect: true,
      },
      successStatus: 201,
      audit: 'application.create',
    })
    .input(createApplicationInput)
    .output(applicationWithSecretOutput)
    .mutation(({ ctx, input }) => createApplication(auditScope(ctx), input, ctx.deps.clock.now())),

  update: managementProcedure('applications:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/applications/{id}',
        tags,
        summary: 'Rename an application or change its redirect URIs',
        protect: true,
      },
      audit: 'application.update',
    })
    .input(updateApplicationInput)
    .output(applicationOutput)
    .mutation(({ ctx, input }) => updateApplication(auditScope(ctx), input, ctx.deps.clock.now())),

  rotateSecret: managementProcedure('applications:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/applications/{id}/rotate-secret',
        tags,
        summary: 'Issue a new client secret (shown this once); the old one stops working at once',
        protect: true,
      },
      audit: 'application.rotate_secret',
    })
    .input(applicationIdInput)
    .output(applicationWithSecretOutput)
    .mutation(({ ctx, input }) => rotateSecret(auditScope(ctx), input.id, ctx.deps.clock.now())),

  delete: managementProcedure('applications:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/applications/{id}',
        tags,
        summary: 'Delete an application; its codes, tokens and grants stop working at once',
        protect: true,
      },
      audit: 'application.delete',
    })
    .input(applicationIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteApplication(auditScope(ctx), input.id)),
});
