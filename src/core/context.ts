import type { IncomingMessage } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { ActionSandbox } from '../modules/actions/sandbox.ts';
import type { SigningKeys } from '../modules/auth/signing-keys.ts';
import type { EmailDispatcher } from '../modules/email/dispatcher.ts';
import type { OAuthServer } from '../oauth/provider.ts';
import type { WebhookDispatcher } from '../modules/webhooks/dispatcher.ts';
import type { RoleLapses } from '../modules/roles/lapses.ts';
import type { Clock } from './clock.ts';
import type { CryptoBox } from './crypto-box.ts';
import type { Metrics } from './metrics.ts';
import type { Logger } from './logger.ts';
import type { LimitDecision, RateLimits } from './rate-limit.ts';
import type { Sweeper } from './sweeper.ts';
import { getRequestInfo } from './request-info.ts';

/** What the process holds once: built in main.ts (or a test), handed to buildApp. */
export interface AppDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
  rateLimits: RateLimits;
  metrics: Metrics;
  redis: Redis | null;
  clock: Clock;
  /** Seals secrets at rest under the master key. */
  box: CryptoBox;
  keys: SigningKeys;
  mailer: EmailDispatcher;
  /** The OAuth 2.0 / OpenID Connect authorization server (oidc-provider), one per process. */
  oauth: OAuthServer;
  webhooks: WebhookDispatcher;
  /** Deletes rows nothing reads any more, hourly (src/retention.ts lists what). */
  sweeper: Sweeper;
  /** Ends time-bound role assignments at their `expires_at` and tells of it (`role.revoked`), every second. */
  roleLapses: RoleLapses;
  /** Runs actions in a separate sandbox process (started on first use). */
  sandbox: ActionSandbox;
}

/**
 * Runs `effect` (counting an attempt in Redis, say) the first time a call asks for `name`, and answers
 * every later ask of the same call with that first result. A mutation's transaction PostgreSQL aborts
 * is run again (core/trpc.ts `retryingAborted`), and each run asks afresh; outside a retried
 * transaction every ask runs its effect.
 */
export type OncePerCall = <T>(name: string, effect: () => Promise<T>) => Promise<T>;

/** `OncePerCall` for one call: its first result of each name, kept for the runs after it. */
export function oncePerCall(): OncePerCall {
  const results = new Map<string, Promise<unknown>>();
  return <T>(name: string, effect: () => Promise<T>) => {
    let result = results.get(name) as Promise<T> | undefined;
    if (!result) {
      result = effect();
      results.set(name, result);
    }
    return result;
  };
}

/** Per-request context, the same for all three doors. Procedure builders narrow it further. */
export interface Context {
  deps: AppDeps;
  /** A fork of the identity map for this request; mutations run it inside one transaction. */
  em: EntityManager;
  requestId: string;
  ip: string;
  userAgent: string | null;
  authorization: string | null;
  /** `X-Tenant-ID`, read only by public procedures. */
  tenantHeader: string | null;
  /** Run after the request's transaction commits (kick the mailer, the webhook dispatcher…). */
  afterCommit: (() => void)[];
  /** Work outside the database that a transaction run again must not repeat (see `OncePerCall`). */
  once: OncePerCall;
  /**
   * The success status a handler decided for this call (meta `mayCreate`: 201 when the call created
   * the resource). One object, shared by every narrowed copy of the context; the REST door reads it.
   */
  success: { status?: 200 | 201 };
  /**
   * The named limit (login, password, social sign-in…) this call was counted against and admitted by:
   * the REST door answers its `RateLimit-*` headers, on success and error alike, in place of the
   * global limit's. One object, shared by every narrowed copy of the context, as `success` is.
   */
  limit: { decision?: LimitDecision };
}

/**
 * The workspace `X-Tenant-ID` names on a call that presents a token of its own (refresh, reset,
 * second-factor completion), or null when none is sent: a token of another workspace then names
 * nothing there (401 INVALID_TOKEN), as it would for an unknown token.
 */
export function namedWorkspace(ctx: Pick<Context, 'tenantHeader'>): string | null {
  return ctx.tenantHeader?.trim() || null;
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

export function createContext(deps: AppDeps, req: IncomingMessage): Context {
  const info = getRequestInfo(req);
  return {
    deps,
    em: deps.orm.em.fork(),
    requestId: info.requestId,
    ip: info.ip,
    userAgent: header(req, 'user-agent')?.slice(0, 512) ?? null,
    authorization: header(req, 'authorization'),
    tenantHeader: header(req, 'x-tenant-id'),
    afterCommit: [],
    once: (_name, effect) => effect(),
    success: {},
    limit: {},
  };
}

/** The same, for plain Express routes (browser flows, hosted pages) that have no tRPC context. */
export function originOfRequest(req: IncomingMessage) {
  const info = getRequestInfo(req);
  return { ip: info.ip, userAgent: header(req, 'user-agent')?.slice(0, 512) ?? null, requestId: info.requestId };
}

/** Where a request came from, as audit rows and sessions record it. */
export function originOf(ctx: Pick<Context, 'ip' | 'userAgent' | 'requestId'>) {
  return { ip: ctx.ip, userAgent: ctx.userAgent, requestId: ctx.requestId };
}
