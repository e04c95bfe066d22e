import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { apiKeyIdInput, apiKeyPage, createApiKeyInput, createdApiKeyOutput, listApiKeysInput } from './api-keys.schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './api-keys.service.ts';

export const apiKeysRouter = router({
  list: managementProcedure('api_keys:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/api-keys', tags: ['api-keys'], summary: 'List secret API keys', protect: true } })
    .input(listApiKeysInput)
    .output(apiKeyPage)
    .query(({ ctx, input }) => listApiKeys(ctx.em, input)),

  create: managementProcedure('api_keys:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/api-keys',
        tags: ['api-keys'],
        summary: 'Create a secret API key (shown once)',
        protect: true,
      },
      successStatus: 201,
      audit: 'api_key.create',
    })
    .input(createApiKeyInput)
    .output(createdApiKeyOutput)
    .mutation(({ ctx, input }) => createApiKey(auditScope(ctx), ctx.principal, input.name)),

  revoke: managementProcedure('api_keys:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/api-keys/{id}', tags: ['api-keys'], summary: 'Revoke a secret API key', protect: true },
      audit: 'api_key.revoke',
    })
    .input(apiKeyIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => revokeApiKey(auditScope(ctx), input.id)),
});
