import { z } from 'zod';
import { auditScope } from '../../core/audit-scope.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { brandingOutput, updateBrandingInput } from './branding.schema.ts';
import { brandingOf, updateBranding } from './branding.service.ts';

const tags = ['customization'];

export const brandingRouter = router({
  get: managementProcedure('branding:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/branding', tags, summary: 'Get branding (defaults filled in)', protect: true } })
    .input(z.object({}).prefault({}))
    .output(brandingOutput)
    .query(({ ctx }) => brandingOf(ctx.em, ctx.workspaceId)),

  update: managementProcedure('branding:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/branding',
        tags,
        summary: 'Update branding: name, logo URL (https), colors (#rrggbb), support email; null puts a default back',
        protect: true,
      },
      audit: 'branding.update',
    })
    .input(updateBrandingInput)
    .output(brandingOutput)
    .mutation(({ ctx, input }) => updateBranding(auditScope(ctx), input, ctx.deps.clock.now())),
});
