import { z } from 'zod';
import type { AuditScope } from '../../core/audit.ts';
import { auditScope } from '../../core/audit-scope.ts';
import type { Context } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { rateLimitedError } from '../../core/rate-limit.ts';
import { publicProcedure, router, userProcedure } from '../../core/trpc.ts';
import { recordAudit } from '../../core/audit.ts';
import { tokensOutput } from '../auth/auth.schema.ts';
import { startSession } from '../auth/sessions.service.ts';
import { enrollInput, enrollmentOutput, factorIdInput, factorOutput, mfaVerifyInput, totpCode, verifyFactorInput } from './mfa.schema.ts';
import { answerChallenge, enrollTotp, listFactors, openChallenge, removeFactor, verifyFactor } from './mfa.service.ts';

const tags = ['mfa'];
const origin = (ctx: Context) => ({ ip: ctx.ip, userAgent: ctx.userAgent, requestId: ctx.requestId });

export const mfaRouter = router({
  listFactors: userProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/mfa/factors', tags, summary: "The caller's factors (never their secrets)", protect: true },
    })
    .input(z.strictObject({}).prefault({}))
    .output(z.array(factorOutput))
    .query(({ ctx }) => listFactors(ctx.em, ctx.userId)),

  enrollTotp: userProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/mfa/factors/totp', tags, summary: 'Start enrolling an authenticator app', protect: true },
      successStatus: 201,
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
    })
    .input(verifyFactorInput)
    .output(factorOutput)
    .mutation(({ ctx, input }) => verifyFactor(ctx.deps, auditScope(ctx), ctx.userId, input.id, input.code, ctx.deps.clock.now())),

  removeFactor: userProcedure
    .meta({ openapi: { method: 'DELETE', path: '/api/v1/mfa/factors/{id}', tags, summary: 'Remove a factor', protect: true } })
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
    })
    .input(mfaVerifyInput)
    .output(tokensOutput)
    .mutation(async ({ ctx, input }) => {
      const now = ctx.deps.clock.now();
      const challenge = await openChallenge(ctx.em, input.mfa_token, now);
      ctx.em.setFilterParams('tenant', { workspaceId: challenge.workspaceId });
      const scope: AuditScope = {
        em: ctx.em,
        workspaceId: challenge.workspaceId,
        actor: { type: 'user', id: challenge.userId },
        ...origin(ctx),
      };
      // Five attempts per five minutes per user, across tokens and addresses; malformed codes count.
      const decision = await ctx.deps.rateLimits.consume('mfaVerify', `user:${challenge.userId}`);
      if (!decision.allowed) throw rateLimitedError(decision);
      const code = totpCode.safeParse(input.code);
      if (!code.success) {
        recordAudit(scope, {
          eventType: 'auth.mfa_verify',
          outcome: 'failure',
          target: { type: 'user', id: challenge.userId },
          details: { reason: 'malformed_code' },
        });
        throw new AppError('BAD_REQUEST', 'The request is invalid', {
          details: [{ path: 'code', message: 'must be six digits' }],
          keepChanges: true,
        });
      }
      await answerChallenge(ctx.deps, scope, challenge, code.data, now);
      return startSession(ctx.deps, ctx.em, { userId: challenge.userId, method: 'mfa' }, origin(ctx));
    }),
});
