import { initTRPC } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { AppErrorCode, FieldProblem } from './errors.ts';
import { UnstorableTextError, unstorableMembers } from './storable-text.ts';
import { auditScope } from './audit-scope.ts';
import { recordAudit } from './audit.ts';
import { namedResource, refusedTarget, type TargetCollection, type TargetSource } from './refused-targets.ts';
import { AppError } from './errors.ts';
import { abortedByConcurrency, toAppError } from './error-normalize.ts';
import { retryingAborted } from './aborted-retry.ts';
import { authenticate, bearerToken, type Principal } from './auth.ts';
import { oncePerCall, originOf, type Context } from './context.ts';
import { grants, type Permission } from './permissions.ts';
import { constantTimeEqual } from './secrets.ts';
import { TENANT_FILTER } from '../db/tenant.ts';
import { isId } from './ids.ts';
import { bodyIdNames, namesNoResource, noSuchResource, pathParamNames } from './path-ids.ts';
import { KnownWorkspaces } from './known-workspaces.ts';
import { newPasswordsIn, withPasswordsHashed } from './passwords.ts';
import { runStatement, type Statement } from './sql.ts';
import { rateLimitedError, type LimitName } from './rate-limit.ts';
import { attemptedEmail, recordRateLimitedAttempt } from './rate-limited-attempts.ts';

/**
 * Procedure meta: the REST path (trpc-to-openapi), the status a success answers with,
 * `singleStatement` for mutations whose whole work is one atomic SQL statement (no BEGIN/COMMIT), and
 * `ownTransaction` for mutations that keep their own atomicity so that no connection is held while
 * they wait: on the network (a DNS lookup, then a short transaction of their own), on Argon2id
 * (sign-in, whose writes are single statements: auth/sign-in.ts; a password change), or on the
 * actions sandbox (a deploy, a test run, the post-login actions of an invitation's acceptance or of a
 * social sign-in's code exchange). Their transactions go through `retriedTransaction`
 * (core/aborted-retry.ts) where they need the wrapper's retry.
 *
 * - `tenantHeader`: the workspace is named by `X-Tenant-ID` (public calls about one workspace; the
 *   OpenAPI document says so).
 * - `audit`: the event type a management write (a user's own write through `userProcedure`, such as
 *   asking for access; or an audited read: `vault.reveal`) records when it succeeds (`user.create`);
 *   when it is refused, a `failure` row of that type is recorded instead (CONTRACT: every write
 *   leaves one).
 * - `conflict`: when the call answers 409 CONFLICT, in a few words (the OpenAPI document says so).
 * - `notFound: false`: the call never answers 404 though its body names an id (`challenge_id`, checked
 *   against the `mfa_token` it comes with), so the OpenAPI document lists none.
 * - `permission`: set by `managementProcedure`, what the call needs (tests read it).
 */
export type Meta = OpenApiMeta<{
  successStatus?: 200 | 201;
  /**
   * A call that creates only sometimes (a PUT that creates its resource when there is none, an
   * assignment that is a new grant): 201 then (the handler sets `ctx.success`), else 200.
   */
  mayCreate?: true;
  singleStatement?: true;
  ownTransaction?: true;
  /**
   * Where the input holds new passwords (`owner.password`): they are hashed before the transaction
   * opens (with `ownTransaction`, before the handler starts).
   */
  hashes?: readonly string[];
  /**
   * Body members that name a resource by its id (or key), as `user_id` and `role_id` of
   * `/roles/assign`: one too long, or holding characters no id has, names nothing and is answered as
   * an unknown one is, 404 (core/path-ids.ts). A missing one, or one that is not a string, stays 400.
   */
  bodyIds?: readonly string[];
  /**
   * For an audited call whose REST path names no resource (`/roles/assign`): the body members (the
   * canonical name first, then its aliases) naming the target its successes record, and of which
   * collection, so that its refusals name it too (core/refused-targets.ts).
   */
  targetInBody?: { collection: TargetCollection; members: readonly string[] };
  tenantHeader?: true;
  audit?: string;
  conflict?: string;
  notFound?: false;
  permission?: Permission;
}>;

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

/** Every procedure starts here. */
const base = t.procedure;

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

/**
 * Every builder's last step before the input is parsed (one middleware: each layer costs every request
 * a copy of tRPC's call options):
 * - Unstorable text (NUL, a lone surrogate) is refused in any input, on every door, before a query or
 *   an encoder sees it; checked here, after the credential and the rate limit, so its 400 ranks like
 *   any invalid input.
 * - An input refused only for what its REST path parameters hold (an id of 300 characters) names no
 *   resource: NOT_FOUND on every door (core/path-ids.ts).
 * - One transaction per mutation: the handler, its audit rows and its outbox rows commit together or
 *   not at all (unless the error asks to keep them: see AppError `keepChanges`). Queries run on the
 *   request's plain fork. `ctx.afterCommit` callbacks (each transaction has a list of its own) run
 *   once the commit is done. A transaction PostgreSQL aborts for a deadlock or a serialization failure
 *   is run again (`retryingAborted`). The new passwords named by meta `hashes` are hashed before the
 *   transaction opens (`withPasswordsHashed`), and before a mutation with its own transactions starts.
 */
const lastSteps = t.middleware(async ({ ctx, type, path, meta, next, getRawInput }) => {
  const rawInput = await getRawInput();
  const pathParams = pathParamNames(meta?.openapi?.path);
  const bodyIds = bodyIdNames(meta?.bodyIds);
  const members = unstorableMembers(rawInput);
  if (members.length > 0) {
    const unstorable = new UnstorableTextError(members);
    throw namesNoResource(unstorable, pathParams, bodyIds) ? noSuchResource() : unstorable;
  }
  const run = async () => {
    if (type !== 'mutation' || meta?.singleStatement) return next();
    const passwords = meta?.hashes ? newPasswordsIn(rawInput, meta.hashes) : [];
    const hashedFirst = <T>(work: () => Promise<T>) => (passwords.length > 0 ? withPasswordsHashed(passwords, work) : work());
    // Its transactions are its own; its new passwords are still hashed before it starts.
    if (meta?.ownTransaction) return hashedFirst(() => next());
    // One per call, not per request: two calls of a tRPC batch count their attempts each.
    const once = oncePerCall();
    const attempt = async (retry: number) => {
      let outcome: Awaited<ReturnType<typeof next>> | undefined;
      const afterCommit: Context['afterCommit'] = [];
      try {
        // A retry starts from an empty identity map: an entity the aborted attempt changed is read again.
        await ctx.em.transactional(
          async (em) => {
            outcome = await next({ ctx: { em, afterCommit, once } });
            if (outcome.ok) return;
            const { appError } = toAppError(outcome.error);
            if (appError.keepChanges) await em.flush();
            else throw outcome.error;
          },
          { clear: retry > 0 },
        );
      } catch (error) {
        if (outcome && !outcome.ok && !abortedByConcurrency(error)) return outcome;
        throw error;
      }
      for (const callback of afterCommit) callback();
      return outcome as NonNullable<typeof outcome>;
    };
    const status = ctx.success.status;
    // The success status an aborted attempt set is reset.
    const transaction = () =>
      retryingAborted({ log: ctx.deps.log, requestId: ctx.requestId, path, onRetry: () => (ctx.success.status = status) }, attempt);
    return hashedFirst(transaction);
  };
  const result = await run();
  if (!result.ok && namesNoResource(result.error, pathParams, bodyIds)) throw noSuchResource();
  return result;
});

/** Resolves the credential and scopes every later query to the caller's workspace. */
const authenticated = t.middleware(async ({ ctx, next }) => {
  const principal: Principal = await authenticate(ctx.deps, ctx.authorization);
  ctx.em.setFilterParams(TENANT_FILTER, { workspaceId: principal.workspaceId });
  return next({ ctx: { principal, workspaceId: principal.workspaceId } });
});

/**
 * A named limit of the spec's table, checked before the input is even parsed. `key` picks what is
 * counted (the client IP, a user). Exceeding it is RATE_LIMITED with Retry-After and RateLimit-*.
 */
export function rateLimit(
  name: LimitName,
  key: (ctx: Context) => string = (ctx) => ctx.ip,
  onFirstRefusal?: (ctx: Context, rawInput: unknown) => Promise<void>,
) {
  return t.middleware(async ({ ctx, next, getRawInput }) => {
    const decision = await ctx.deps.rateLimits.consume(name, key(ctx));
    if (!decision.allowed) {
      if (decision.firstRefusal && onFirstRefusal) {
        // A body that cannot be read names no email; the refusal is recorded all the same.
        await onFirstRefusal(ctx, await getRawInput().catch(() => undefined));
      }
      throw rateLimitedError(decision);
    }
    ctx.limit.decision = decision;
    return next();
  });
}

const noLimit = t.middleware(({ next }) => next());

/** The caller an authenticated call is scoped to. */
interface Scoped {
  principal: Principal;
  workspaceId: string;
}

/** A call that names its `audit` type: what the failure row of its refusal is made of. */
interface Audited {
  eventType: string;
  /** Where the input names the call's target: its REST path's first parameter (`/api/v1/users/{id}`), or meta `targetInBody`. */
  target: TargetSource | undefined;
  getRawInput: () => Promise<unknown>;
}

/** The call's `audit` type (a write's, or an audited read's such as `vault.reveal`), when it names one. */
function auditedCall(meta: Meta | undefined, getRawInput: () => Promise<unknown>): Audited | undefined {
  if (!meta?.audit) return undefined;
  return { eventType: meta.audit, target: namedResource(meta.openapi?.path) ?? meta.targetInBody, getRawInput };
}

/**
 * A call that was refused (403, 404, 409, an invalid body) rolled back everything it did, its audit
 * row too; this records the attempt on its own: a `failure` row of the call's `audit` type, with the
 * refusal's code. Its target is the resource the call's REST path names by its first parameter
 * (`PATCH /api/v1/users/{id}` → the user), or its body does (meta `targetInBody`: `/roles/assign`'s
 * `user_id`), when that is one of the caller's workspace
 * (core/refused-targets.ts): an id of another workspace, an unknown or malformed one names none.
 * Errors that keep their changes wrote their own rows; 429 and 5xx are not the caller's attempt being
 * judged.
 */
async function recordRefusal(ctx: Context, scoped: Scoped, audited: Audited, error: unknown) {
  const { appError } = toAppError(error);
  if (appError.keepChanges || appError.status >= 500 || appError.appCode === 'RATE_LIMITED') return;
  const em = ctx.em.fork();
  const source = audited.target;
  // An input that cannot be read names no target; the refusal is recorded all the same.
  const rawInput = source ? await audited.getRawInput().catch(() => undefined) : undefined;
  const target = source ? await refusedTarget(em, scoped.workspaceId, source, rawInput) : undefined;
  recordAudit(
    { ...auditScope({ ...ctx, ...scoped }), em },
    { eventType: audited.eventType, outcome: 'failure', target, details: { reason: appError.appCode, status: appError.status } },
  );
  await em.flush();
}

/** Records `refused`, an error the caller meets before the handler runs, when the call is audited; then it is thrown. */
async function refuse(ctx: Context, scoped: Scoped, audited: Audited | undefined, refused: AppError): Promise<AppError> {
  if (audited) await recordRefusal(ctx, scoped, audited, refused);
  return refused;
}

/** Records the refusal of the rest of an audited call's chain (the handler, the input), if it was refused. */
async function auditOutcome<R extends { ok: true } | { ok: false; error: unknown }>(
  ctx: Context,
  scoped: Scoped,
  audited: Audited | undefined,
  result: R,
): Promise<R> {
  if (!result.ok && audited) await recordRefusal(ctx, scoped, audited, result.error);
  return result;
}

/**
 * A signed-in user acting as themself (their own factors, password, sessions; asking for access). A
 * named limit counts every call from the address, before the credential is checked, as the spec's
 * per-IP limits do. A call that names its `audit` type records its refusals, as management calls do.
 */
export function limitedUserProcedure(limit?: LimitName) {
  return base
    .use(limit ? rateLimit(limit) : noLimit)
    .use(authenticated)
    .use(async ({ ctx, meta, next, getRawInput }) => {
      const { principal } = ctx;
      const audited = auditedCall(meta, getRawInput);
      if (principal.type !== 'user') {
        throw await refuse(ctx, ctx, audited, new AppError('FORBIDDEN', 'This call is made as a signed-in user, not with an API key'));
      }
      return auditOutcome(ctx, ctx, audited, await next({ ctx: { principal, userId: principal.id, sessionId: principal.sessionId } }));
    })
    .use(lastSteps);
}

export const userProcedure = limitedUserProcedure();

/**
 * Any caller of the workspace, an API key or a signed-in user whatever their roles: reads whose answer
 * narrows to what the caller may see (a member lists their own access requests), and writes only the
 * owner of a thing makes (a requester cancels their request). The handler decides from
 * `ctx.principal.grants`. A call that names its `audit` type records its refusals, as management calls do.
 */
export const authenticatedProcedure = base
  .use(authenticated)
  .use(async ({ ctx, meta, next, getRawInput }) => auditOutcome(ctx, ctx, auditedCall(meta, getRawInput), await next()))
  .use(lastSteps);

/**
 * Management calls: an API key, or a user whose roles grant `permission`. One layer resolves the
 * credential, checks the permission and, for a call that names its `audit` type, records a refusal.
 * A named `limit` counts every call from the address first, before the credential is read, as the
 * spec's per-IP limits do (a path under `/api/v1/auth/oauth/*` counts whoever calls it).
 */
export function managementProcedure(permission: Permission, limit?: LimitName) {
  return base
    .meta({ permission })
    .use(limit ? rateLimit(limit) : noLimit)
    .use(async ({ ctx, meta, next, getRawInput }) => {
      const principal: Principal = await authenticate(ctx.deps, ctx.authorization);
      ctx.em.setFilterParams(TENANT_FILTER, { workspaceId: principal.workspaceId });
      const scoped = { principal, workspaceId: principal.workspaceId };
      const audited = auditedCall(meta, getRawInput);
      if (!grants(principal.grants, permission)) {
        throw await refuse(ctx, scoped, audited, new AppError('FORBIDDEN', `This needs the ${permission} permission`));
      }
      return auditOutcome(ctx, scoped, audited, await next({ ctx: scoped }));
    })
    .use(lastSteps);
}

/** Operator calls (`/platform/v1`): `Bearer $PLATFORM_API_TOKEN`; absent when the token is unset. */
export const platformProcedure = base
  .use(({ ctx, next }) => {
    const expected = ctx.deps.config.PLATFORM_API_TOKEN;
    if (!expected) throw new AppError('NOT_FOUND', 'No such route');
    const presented = bearerToken(ctx.authorization);
    if (!constantTimeEqual(presented, expected))
      throw new AppError('INVALID_TOKEN', 'The platform token is invalid', { challenge: 'bearer' });
    return next();
  })
  .use(lastSteps);

/** Anyone, no workspace (refresh and reset: their token names the workspace). */
export const publicProcedure = base.use(lastSteps);

/** The same, counted against a named limit first. */
export function limitedPublicProcedure(limit: LimitName) {
  return base.use(rateLimit(limit)).use(lastSteps);
}

const WORKSPACE_EXISTS: Statement = { name: 'tenant_exists', text: 'select id from workspaces where id = $1' };

/** Ids are unique across databases, so one process-wide memory serves every app a test starts. */
const knownWorkspaces = new KnownWorkspaces();

function workspaceExists(ctx: Context, workspaceId: string): Promise<boolean> {
  if (!isId('wsp', workspaceId)) return Promise.resolve(false);
  return knownWorkspaces.exists(workspaceId, async (id) => (await runStatement(ctx.deps.orm, WORKSPACE_EXISTS, [id])).length > 0);
}

/** `X-Tenant-ID` when sent (no credential is read then), else the workspace of the credential sent, if any. */
async function workspaceOfPublicCall(ctx: Context): Promise<string | undefined> {
  const named = ctx.tenantHeader?.trim();
  if (named) return named;
  return ctx.authorization ? (await authenticate(ctx.deps, ctx.authorization)).workspaceId : undefined;
}

/**
 * The first refusal of an address in a window, recorded as a failed `eventType` in the workspace that
 * `X-Tenant-ID` names (a credential is not read for a refused call), with the email the body named.
 */
function recordFirstRefusal(limit: LimitName, eventType: string) {
  return async (ctx: Context, rawInput: unknown) => {
    const workspaceId = ctx.tenantHeader?.trim();
    if (!workspaceId || !(await workspaceExists(ctx, workspaceId))) return;
    await recordRateLimitedAttempt(ctx.deps, { workspaceId, eventType, limit, origin: originOf(ctx), email: emailIn(rawInput) });
  };
}

/** The `email` member of a call's raw input, if it has one. */
function emailIn(rawInput: unknown): unknown {
  return typeof rawInput === 'object' && rawInput !== null ? (rawInput as { email?: unknown }).email : undefined;
}

/**
 * A public attempt about a workspace refused for its body (no password, a malformed email, a field
 * too long) is an attempt all the same: a `failure` row of `eventType` (`reason: invalid_request`),
 * with the address when the body named a readable one. Written after the call's own work, on a
 * connection of its own (the call holds none by then); the call's limit bounds how many.
 */
async function recordInvalidAttempt(ctx: Context, workspaceId: string, eventType: string, rawInput: unknown): Promise<void> {
  const em = ctx.em.fork();
  const email = attemptedEmail(emailIn(rawInput));
  recordAudit(
    { em, workspaceId, actor: { type: 'system', id: null }, ...originOf(ctx) },
    { eventType, outcome: 'failure', details: { reason: 'invalid_request', ...(email === undefined ? {} : { email }) } },
  );
  await em.flush();
}

/**
 * Public calls about one workspace (sign-in, forgotten password, the sign-in buttons), named by
 * `X-Tenant-ID`; a caller that sends no header but a credential (a backend with its API key, a signed-in
 * user) means the credential's workspace, as every other call of theirs does.
 */
export function publicTenantProcedure(limit?: LimitName, refusedAs?: string) {
  return base
    .meta({ tenantHeader: true })
    .use(limit ? rateLimit(limit, (ctx) => ctx.ip, refusedAs ? recordFirstRefusal(limit, refusedAs) : undefined) : noLimit)
    .use(async ({ ctx, next, getRawInput }) => {
      const workspaceId = await workspaceOfPublicCall(ctx);
      if (!workspaceId) throw new AppError('BAD_REQUEST', 'Send the workspace id in the X-Tenant-ID header');
      if (!(await workspaceExists(ctx, workspaceId))) throw new AppError('NOT_FOUND', 'No workspace has the id given in X-Tenant-ID');
      ctx.em.setFilterParams(TENANT_FILTER, { workspaceId });
      const result = await next({ ctx: { workspaceId } });
      if (!result.ok && refusedAs && toAppError(result.error).appError.appCode === 'BAD_REQUEST') {
        // A body that cannot be read names no address; the attempt is recorded all the same.
        await recordInvalidAttempt(ctx, workspaceId, refusedAs, await getRawInput().catch(() => undefined));
      }
      return result;
    })
    .use(lastSteps);
}
