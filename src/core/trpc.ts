import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { AppErrorCode, FieldProblem } from './errors.ts';
import { AppError } from './errors.ts';
import { toAppError } from './error-normalize.ts';
import { authenticate, bearerToken, type Principal } from './auth.ts';
import type { Context } from './context.ts';
import { grants, type Permission } from './permissions.ts';
import { constantTimeEqual } from './secrets.ts';
import { TENANT_FILTER } from '../db/tenant.ts';

/** Procedure meta: the REST path (trpc-to-openapi) and the status a success answers with. */
export type Meta = OpenApiMeta<{ successStatus?: 200 | 201 }>;

export interface ErrorData {
  appCode: AppErrorCode;
  httpStatus: number;
  details?: FieldProblem[];
  path?: string;
}

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    errorFormatter({ shape, error, ctx, path }) {
      const { appError, internal } = toAppError(error);
      if (internal) ctx?.deps.log.error('unhandled error', { requestId: ctx.requestId, path, error: error.cause ?? error });
      const data: ErrorData = { appCode: appError.appCode, httpStatus: appError.status, path };
      if (appError.details) data.details = appError.details;
      return { message: appError.message, code: shape.code, data };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

/**
 * One transaction per mutation: the handler, its audit rows and its outbox rows commit together or
 * not at all. Queries run on the request's plain fork.
 */
const transactionPerMutation = t.middleware(async ({ ctx, type, next }) => {
  if (type !== 'mutation') return next();
  let outcome: Awaited<ReturnType<typeof next>> | undefined;
  try {
    await ctx.em.transactional(async (em) => {
      outcome = await next({ ctx: { em } });
      if (!outcome.ok) throw outcome.error;
    });
  } catch (error) {
    if (outcome && !outcome.ok) return outcome;
    throw error;
  }
  return outcome as NonNullable<typeof outcome>;
});

/** Resolves the credential and scopes every later query to the caller's workspace. */
const authenticated = t.middleware(async ({ ctx, next }) => {
  const principal: Principal = await authenticate(ctx.em, ctx.authorization);
  ctx.em.setFilterParams(TENANT_FILTER, { workspaceId: principal.workspaceId });
  return next({ ctx: { principal, workspaceId: principal.workspaceId } });
});

/** Anyone; public procedures that need a workspace read X-Tenant-ID themselves. */
export const publicProcedure = t.procedure.use(transactionPerMutation);

/** A signed-in user acting as themself (their own factors, password, sessions). */
export const userProcedure = t.procedure
  .use(authenticated)
  .use(({ ctx, next }) => {
    if (ctx.principal.type !== 'user') throw new AppError('FORBIDDEN', 'This call is made as a signed-in user, not with an API key');
    return next({ ctx: { principal: ctx.principal, userId: ctx.principal.id } });
  })
  .use(transactionPerMutation);

/** Management calls: an API key, or a user whose roles grant `permission`. */
export function managementProcedure(permission: Permission) {
  return t.procedure
    .use(authenticated)
    .use(({ ctx, next }) => {
      if (!grants(ctx.principal.grants, permission)) {
        throw new AppError('FORBIDDEN', `This needs the ${permission} permission`);
      }
      return next();
    })
    .use(transactionPerMutation);
}

/** Operator calls (`/platform/v1`): `Bearer $PLATFORM_API_TOKEN`; absent when the token is unset. */
export const platformProcedure = t.procedure
  .use(({ ctx, next }) => {
    const expected = ctx.deps.config.PLATFORM_API_TOKEN;
    if (!expected) throw new AppError('NOT_FOUND', 'No such route');
    const presented = bearerToken(ctx.authorization);
    if (!constantTimeEqual(presented, expected)) throw new AppError('INVALID_TOKEN', 'The platform token is invalid');
    return next();
  })
  .use(transactionPerMutation);
