import { auditScope } from '../../core/audit-scope.ts';
import { namedWorkspace, originOf } from '../../core/context.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { publicProcedure, router, userProcedure } from '../../core/trpc.ts';
import { tokensOutput } from '../auth/auth.schema.ts';
import {
  enrollInput,
  enrollmentOutput,
  factorIdInput,
  factorOutput,
  factorPage,
  listFactorsInput,
  mfaVerifyInput,
  verifyFactorInput,
} from './mfa.schema.ts';
import { completeSignInChallenge, enrollTotp, FACTOR_LIMITS, listFactors, removeFactor, verifyFactor } from './mfa.service.ts';

const tags = ['mfa'];

export const mfaRouter = router({
  listFactors: userProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/mfa/factors', tags, summary: "The caller's factors (never their secrets)", protect: true },
    })
    .input(listFactorsInput)
    .output(factorPage)
    .query(({ ctx, input }) => listFactors(ctx.em, ctx.userId, input)),

  enrollTotp: userProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/mfa/factors/totp', tags, summary: 'Start enrolling an authenticator app', protect: true },
      successStatus: 201,
      conflict: `The account has the most verified factors it may have (${FACTOR_LIMITS.total}); remove one first`,
      audit: 'mfa.factor_enroll',
    })
    .input(enrollInput)
    .output(enrollmentOutput)
    .mutation(({ ctx, input }) => enrollTotp(ctx.deps, auditScope(ctx), ctx.userId, input.name, ctx.deps.clock.now())),

  verifyFactor: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/mfa/factors/{id}/verify',
        tags,
        summary: 'Confirm an enrollment with a code',
        protect: true,
      },
      conflict: 'The factor is verified already',
      audit: 'mfa.factor_verify',
    })
    .input(verifyFactorInput)
    .output(factorOutput)
    .mutation(({ ctx, input }) => verifyFactor(ctx.deps, auditScope(ctx), ctx.userId, input.id, input.code, ctx.deps.clock.now())),

  removeFactor: userProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/mfa/factors/{id}', tags, summary: 'Remove a factor', protect: true },
      audit: 'mfa.factor_remove',
    })
    .input(factorIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeFactor(auditScope(ctx), ctx.userId, input.id)),

  verifyChallenge: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/mfa/verify',
        tags: ['auth'],
        summary: 'Complete a sign-in challenge with mfa_token and a code',
      },
      // An unknown mfa_token or challenge_id, or another workspace's, is 401 INVALID_TOKEN: nothing is 404.
      notFound: false,
    })
    .input(mfaVerifyInput)
    .output(tokensOutput)
    .mutation(({ ctx, input }) =>
      completeSignInChallenge(
        ctx.deps,
        ctx.em,
        input.mfa_token,
        input.code,
        originOf(ctx),
        namedWorkspace(ctx),
        input.challenge_id,
        ctx.once,
      ),
    ),
});
