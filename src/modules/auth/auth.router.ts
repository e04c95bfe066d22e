import { assertPasswordAllowed } from './password-policy.ts';
import { z } from 'zod';
import { auditScope } from '../../core/audit-scope.ts';
import { namedWorkspace, originOf } from '../../core/context.ts';
import {
  limitedPublicProcedure,
  limitedUserProcedure,
  publicProcedure,
  publicTenantProcedure,
  router,
  userProcedure,
} from '../../core/trpc.ts';
import {
  changeInput,
  endedOutput,
  forgotInput,
  forgotOutput,
  listSessionsInput,
  loginInput,
  logoutInput,
  meOutput,
  refreshInput,
  resetInput,
  sessionIdInput,
  sessionPage,
  tokensOutput,
} from './auth.schema.ts';
import { challengeOutput } from '../mfa/mfa.schema.ts';
import { changePassword, FORGOT_MESSAGE, forgotPassword, resetPassword } from './password.service.ts';
import { listSessions, logout, refreshSession, revokeAllSessions, revokeOwnSession } from './sessions.service.ts';
import { signIn } from './sign-in.ts';
import { ALL_PERMISSIONS } from '../../core/permissions.ts';
import { getUser } from '../users/users.service.ts';

const noInput = z.strictObject({}).prefault({});
const tags = ['auth'];

export const authRouter = router({
  login: publicTenantProcedure('login', 'auth.login')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/login', tags, summary: 'Sign in with email and password (send X-Tenant-ID)' },
      ownTransaction: true,
    })
    .input(loginInput)
    .output(z.union([tokensOutput, challengeOutput]))
    .mutation(async ({ ctx, input }) => {
      const result = await signIn(ctx.deps, ctx.em, { workspaceId: ctx.workspaceId, ...input, origin: originOf(ctx) });
      return result.kind === 'tokens' ? result.tokens : result.challenge;
    }),

  refresh: publicProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/auth/refresh', tags, summary: 'Swap a refresh token for new tokens (rotated)' },
      singleStatement: true,
    })
    .input(refreshInput)
    .output(tokensOutput)
    .mutation(({ ctx, input }) => refreshSession(ctx.deps, input.refresh_token, originOf(ctx), namedWorkspace(ctx))),

  logout: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/logout',
        tags,
        summary: 'End the session of the presented access token',
        protect: true,
      },
      audit: 'auth.logout',
    })
    .input(logoutInput)
    .output(endedOutput)
    .mutation(({ ctx, input }) =>
      logout(auditScope(ctx), { userId: ctx.userId, sessionId: ctx.sessionId }, ctx.deps.clock.now(), input.refresh_token),
    ),

  revokeAllSessions: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/sessions/revoke-all',
        tags,
        summary: 'End every session of the caller, this one included',
        protect: true,
      },
      audit: 'auth.sessions_revoke_all',
    })
    .input(noInput)
    .output(endedOutput)
    .mutation(({ ctx }) => revokeAllSessions(auditScope(ctx), ctx.userId, ctx.deps.clock.now())),

  forgotPassword: publicTenantProcedure('password', 'auth.password_forgot')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/password/forgot',
        tags,
        summary: 'Email a reset link (send X-Tenant-ID); same answer whether or not the account exists',
      },
    })
    .input(forgotInput)
    .output(forgotOutput)
    .mutation(async ({ ctx, input }) => {
      const { queued } = await forgotPassword(ctx.deps, ctx.em, ctx.workspaceId, input.email, originOf(ctx));
      if (queued) ctx.afterCommit.push(() => ctx.deps.mailer.kick());
      return { message: FORGOT_MESSAGE };
    }),

  resetPassword: limitedPublicProcedure('password')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/password/reset',
        tags,
        summary: 'Set a new password with the token from a reset link',
      },
      hashes: ['password'],
    })
    .input(resetInput)
    .output(z.object({ password_reset: z.literal(true) }))
    .mutation(({ ctx, input }) => {
      assertPasswordAllowed(ctx.deps.config, input.password, 'password');
      return resetPassword(ctx.deps, ctx.em, input.token, input.password, originOf(ctx), namedWorkspace(ctx));
    }),

  changePassword: limitedUserProcedure('password')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/auth/password/change',
        tags,
        summary: "Change the caller's password; their other sessions end",
        protect: true,
      },
      audit: 'auth.password_change',
      // It checks the current password before hashing the new one, and holds no connection meanwhile.
      ownTransaction: true,
    })
    .input(changeInput)
    .output(z.object({ password_changed: z.literal(true), ended_sessions: z.number().int() }))
    .mutation(({ ctx, input }) => {
      assertPasswordAllowed(ctx.deps.config, input.new_password, 'new_password');
      return changePassword(
        ctx.deps,
        ctx.em,
        { userId: ctx.userId, sessionId: ctx.sessionId, workspaceId: ctx.workspaceId },
        input,
        originOf(ctx),
      );
    }),

  sessions: userProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/auth/sessions', tags, summary: "The caller's live sessions", protect: true } })
    .input(listSessionsInput)
    .output(sessionPage)
    .query(({ ctx, input }) => listSessions(ctx.em, ctx.userId, ctx.sessionId, ctx.deps.clock.now(), input)),

  me: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/auth/me',
        tags,
        summary: 'The signed-in user, their live roles and the permissions those grant (`*` spelled out)',
        protect: true,
      },
    })
    .input(noInput)
    .output(meOutput)
    .query(async ({ ctx }) => {
      const held = ctx.principal.grants;
      const permissions = held.includes('*') ? ALL_PERMISSIONS : ALL_PERMISSIONS.filter((p) => held.includes(p));
      const user = await getUser(ctx.deps.orm, ctx.workspaceId, ctx.userId, ctx.deps.clock.now());
      return { user, workspace_id: ctx.workspaceId, roles: ctx.principal.roles, permissions };
    }),

  revokeSession: userProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/auth/sessions/{id}', tags, summary: 'End one of the caller’s sessions', protect: true },
      audit: 'auth.session_revoke',
    })
    .input(sessionIdInput)
    .output(z.object({ id: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => revokeOwnSession(auditScope(ctx), ctx.userId, input.id, ctx.deps.clock.now())),
});
