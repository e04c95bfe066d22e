import { assertPasswordAllowed } from '../auth/password-policy.ts';
import { createWorkspaceInput, createdWorkspaceOutput } from './workspaces.schema.ts';
import { createWorkspace } from './workspaces.service.ts';
import { platformProcedure, router } from '../../core/trpc.ts';

export const workspacesRouter = router({
  create: platformProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/platform/v1/workspaces',
        tags: ['platform'],
        summary: 'Create a workspace with its owner and first API key (operators, PLATFORM_API_TOKEN)',
        protect: true,
      },
      successStatus: 201,
      hashes: ['owner.password'],
    })
    .input(createWorkspaceInput)
    .output(createdWorkspaceOutput)
    .mutation(({ ctx, input }) => {
      assertPasswordAllowed(ctx.deps.config, input.owner.password, 'owner.password');
      return createWorkspace(ctx.em, input, { ip: ctx.ip, userAgent: ctx.userAgent, requestId: ctx.requestId });
    }),
});
