import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { createDomainInput, domainIdInput, domainOutput, domainPage, listDomainsInput } from './domains.schema.ts';
import { addDomain, deleteDomain, getDomain, listDomains, verifyDomain } from './domains.service.ts';

const tags = ['customization'];

export const domainsRouter = router({
  list: managementProcedure('domains:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/domains', tags, summary: 'List custom domains; filter by status', protect: true } })
    .input(listDomainsInput)
    .output(domainPage)
    .query(({ ctx, input }) => listDomains(ctx.em, input)),

  create: managementProcedure('domains:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/domains',
        tags,
        summary: 'Add a custom domain; answers the TXT record to publish before verifying',
        protect: true,
      },
      successStatus: 201,
      audit: 'domain.create',
      conflict: 'The domain is added already, or verified by another workspace',
    })
    .input(createDomainInput)
    .output(domainOutput)
    .mutation(({ ctx, input }) => addDomain(auditScope(ctx), input.domain, ctx.deps.clock.now())),

  get: managementProcedure('domains:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/domains/{id}', tags, summary: 'Get a custom domain', protect: true } })
    .input(domainIdInput)
    .output(domainOutput)
    .query(({ ctx, input }) => getDomain(ctx.em, input.id)),

  verify: managementProcedure('domains:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/domains/{id}/verify',
        tags,
        summary: 'Check the domain’s TXT record now: verified when it is published, failed (retriable) otherwise',
        protect: true,
      },
      ownTransaction: true,
      audit: 'domain.verify',
      conflict: 'The domain is verified by another workspace',
    })
    .input(domainIdInput)
    .output(domainOutput)
    .mutation(({ ctx, input }) =>
      verifyDomain(ctx.em, (em) => ({ ...auditScope(ctx), em }), input.id, ctx.deps.config.DNS_SERVERS, ctx.deps.clock.now()),
    ),

  delete: managementProcedure('domains:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/domains/{id}', tags, summary: 'Remove a custom domain', protect: true },
      audit: 'domain.delete',
    })
    .input(domainIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteDomain(auditScope(ctx), input.id)),
});
