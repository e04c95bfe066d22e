import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from './audit.ts';
import type { AppDeps, OncePerCall } from './context.ts';
import { LIMITS, type LimitDecision, type LimitName } from './rate-limit.ts';
import { isStorableText } from './storable-text.ts';

export interface RateLimitedAttempt {
  workspaceId: string;
  /** The audit type of what was attempted (`auth.login`, `auth.password_forgot`). */
  eventType: string;
  limit: LimitName;
  origin: { ip: string | null; userAgent: string | null; requestId: string | null };
  /** The address the attempt named, when it named a readable one. */
  email?: unknown;
}

/**
 * The first attempt an address is refused in a window leaves a `failure` row (`reason:
 * rate_limited`), as Auth0 logs an IP it starts blocking: an admin reading the audit sees why sign-ins
 * from there stopped. One row per address and window, not one per refused request, so a flood cannot
 * turn the limit into a stream of writes. The row is written on its own; failing to write it leaves
 * the 429 as it is, and is logged.
 */
export async function recordRateLimitedAttempt(deps: AppDeps, attempt: RateLimitedAttempt): Promise<void> {
  const em = deps.orm.em.fork();
  try {
    addRateLimitedRow(em, attempt);
    await em.flush();
  } catch (error) {
    deps.log.warn('the audit row of a rate-limited attempt was not written', { error, workspaceId: attempt.workspaceId });
  }
}

/** The address an attempt's body named, when it is text that can be stored (at most 320 characters of it). */
export function attemptedEmail(email: unknown): string | undefined {
  return typeof email === 'string' && isStorableText(email) ? email.slice(0, 320) : undefined;
}

function addRateLimitedRow(em: EntityManager, attempt: RateLimitedAttempt): void {
  const { points, duration } = LIMITS[attempt.limit];
  const email = attemptedEmail(attempt.email);
  recordAudit(
    { em, workspaceId: attempt.workspaceId, actor: { type: 'system', id: null }, ...attempt.origin },
    {
      eventType: attempt.eventType,
      outcome: 'failure',
      details: { reason: 'rate_limited', limit: points, window_seconds: duration, ...(email === undefined ? {} : { email }) },
    },
  );
}

/**
 * Counts one attempt against `attempt.limit` for `key`, and records the window's first refusal (above);
 * answers the decision, so the caller answers a refusal in its own way (429, a page). A caller inside a
 * transaction passes its `em`: the row joins its unit of work, and the caller's refusal must keep its
 * changes. A write on a connection of its own would wait for one while the caller holds the embedded
 * database's only connection (a minute, the pool's acquire timeout, for every request). Such a caller
 * also passes its call's `once` (core/context.ts): a transaction run again after PostgreSQL aborted it
 * is answered the first run's decision, not counted twice; its first refusal's row, rolled back with
 * the aborted run, is added again.
 */
export async function consumeRecordingFirstRefusal(
  deps: AppDeps,
  key: string,
  attempt: RateLimitedAttempt,
  inTransaction?: EntityManager,
  once: OncePerCall = (_name, effect) => effect(),
): Promise<LimitDecision> {
  const decision = await once(`limit:${attempt.limit}:${key}`, () => deps.rateLimits.consume(attempt.limit, key));
  if (!decision.allowed && decision.firstRefusal) {
    if (inTransaction) addRateLimitedRow(inTransaction, attempt);
    else await recordRateLimitedAttempt(deps, attempt);
  }
  return decision;
}
