import { z } from 'zod';
import { auditScope } from '../../core/audit-scope.ts';
import { namedWorkspace, originOf } from '../../core/context.ts';
import { limitedPublicProcedure, managementProcedure, publicTenantProcedure, router } from '../../core/trpc.ts';
import { challengeOutput } from '../mfa/mfa.schema.ts';
import { tokensOutput } from '../auth/auth.schema.ts';
import { exchangeCode } from './external-sign-in.ts';
import {
  enabledProviderPage,
  getProvider,
  listEnabledProviders,
  listProvidersInput,
  providerOutput,
  providerPathInput,
  putProvider,
  putProviderInput,
  storedProviderOutput,
} from './social.ts';

const tags = ['auth'];

export const ssoRouter = router({
  providers: publicTenantProcedure('socialAuth')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/auth/oauth/providers',
        tags,
        summary: 'List enabled social providers (send X-Tenant-ID, or a credential of the workspace)',
      },
    })
    .input(listProvidersInput)
    .output(enabledProviderPage)
    .query(({ ctx, input }) => listEnabledProviders(ctx.deps, ctx.em, ctx.workspaceId, input)),

  getProvider: managementProcedure('organizations:read', 'socialAuth')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/auth/oauth/providers/{provider}',
        tags,
        summary: 'Read a social provider’s configuration, enabled or not (whether a client secret is set, never the secret)',
        protect: true,
      },
    })
    .input(providerPathInput)
    .output(storedProviderOutput)
    .query(({ ctx, input }) => getProvider(ctx.deps, ctx.em, input.provider)),

  putProvider: managementProcedure('organizations:write', 'socialAuth')
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/v1/auth/oauth/providers/{provider}',
        tags,
        summary:
          'Configure Google, GitHub, Microsoft or a generic OpenID provider for social sign-in (201 when it creates the configuration)',
        protect: true,
      },
      mayCreate: true,
      audit: 'social_provider.update',
      // The issuer's address is checked (a DNS lookup) before the transaction opens.
      ownTransaction: true,
    })
    .input(putProviderInput)
    .output(providerOutput)
    .mutation(async ({ ctx, input }) => {
      const { provider, created } = await putProvider(ctx.deps, auditScope(ctx), input, ctx.deps.clock.now());
      if (created) ctx.success.status = 201;
      return provider;
    }),

  exchange: limitedPublicProcedure('socialAuth')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/oauth/exchange',
        tags,
        summary: 'Swap the one-time code of a social or SSO sign-in for tokens (or the second-factor challenge)',
      },
      // Its writes are single statements, as a password sign-in's: the post-login actions run holding no connection.
      ownTransaction: true,
    })
    .input(
      z.strictObject({
        code: z.string().min(1).max(200),
        /** RFC 7636: required when the start sent a code_challenge. */
        code_verifier: z
          .string()
          .regex(/^[A-Za-z0-9._~-]{43,128}$/)
          .optional(),
      }),
    )
    .output(z.union([tokensOutput, challengeOutput]))
    .mutation(async ({ ctx, input }) => {
      const result = await exchangeCode(
        ctx.deps,
        ctx.em,
        { code: input.code, codeVerifier: input.code_verifier },
        originOf(ctx),
        namedWorkspace(ctx),
      );
      return result.kind === 'tokens' ? result.tokens : result.challenge;
    }),
});
