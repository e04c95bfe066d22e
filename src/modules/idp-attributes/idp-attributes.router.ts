import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  createIdpAttribute,
  createIdpAttributeInput,
  idpAttributeOutput,
  idpAttributePage,
  listIdpAttributes,
  listIdpAttributesInput,
  updateIdpAttribute,
  updateIdpAttributeInput,
} from './idp-attributes.ts';

const tags = ['organizations'];

export const idpAttributesRouter = router({
  list: managementProcedure('organizations:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/idp-attributes', tags, summary: 'List identity-provider attributes', protect: true } })
    .input(listIdpAttributesInput)
    .output(idpAttributePage)
    .query(({ ctx, input }) => listIdpAttributes(ctx.em, input)),

  create: managementProcedure('organizations:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/idp-attributes', tags, summary: 'Create a custom attribute', protect: true },
      successStatus: 201,
      audit: 'idp_attribute.create',
      conflict: 'An attribute with this key exists already',
    })
    .input(createIdpAttributeInput)
    .output(idpAttributeOutput)
    .mutation(({ ctx, input }) => createIdpAttribute(auditScope(ctx), input, ctx.deps.clock.now())),

  update: managementProcedure('organizations:write')
    .meta({
      openapi: { method: 'PATCH', path: '/api/v1/idp-attributes/{key}', tags, summary: 'Switch an attribute on or off', protect: true },
      audit: 'idp_attribute.update',
    })
    .input(updateIdpAttributeInput)
    .output(idpAttributeOutput)
    .mutation(({ ctx, input }) => updateIdpAttribute(auditScope(ctx), input, ctx.deps.clock.now())),
});
