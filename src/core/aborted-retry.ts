import { setTimeout } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/postgresql';
import { abortedByConcurrency } from './error-normalize.ts';
import { AppError } from './errors.ts';
import type { Logger } from './logger.ts';

/** How many times a transaction PostgreSQL aborted for a deadlock or a serialization failure is run again. */
const ABORTED_RETRIES = 2;

/** Who runs a transaction again, for the log line each retry writes; `onRetry` resets what the aborted run set. */
export interface RetryScope {
  log: Logger;
  requestId: string | null;
  path: string;
  onRetry?: () => void;
}

/**
 * Runs a transaction again, up to ABORTED_RETRIES times, when PostgreSQL aborted it for a deadlock or
 * a serialization failure: nothing of it was committed, and it did nothing outside it (its audit rows,
 * events and emails are rows of the transaction; the rate limits were counted and the passwords hashed
 * before it; what reaches the outside waits in its own `afterCommit` list, dropped with it; what a
 * handler must do outside it, such as counting a second-factor attempt, goes through `ctx.once`,
 * which a run again answers with the first run's result). `attempt(retry)` gets 0, then 1 and 2; it
 * answers an outcome or throws. A short random pause lets the transaction that won go on. After the
 * last, the abort is answered as it is (core/error-normalize.ts: 503 UNAVAILABLE with `Retry-After: 1`,
 * its cause logged, never its PostgreSQL text).
 */
export async function retryingAborted<R extends { ok: boolean; error?: unknown }>(
  scope: RetryScope,
  attempt: (retry: number) => Promise<R>,
): Promise<R> {
  for (let retry = 0; ; retry++) {
    let aborted: unknown;
    try {
      const outcome = await attempt(retry);
      if (outcome.ok || !abortedByConcurrency(outcome.error) || retry === ABORTED_RETRIES) return outcome;
      aborted = outcome.error;
    } catch (error) {
      if (!abortedByConcurrency(error) || retry === ABORTED_RETRIES) throw error;
      aborted = error;
    }
    scope.log.warn('transaction aborted by the database, run again', {
      requestId: scope.requestId,
      path: scope.path,
      retry: retry + 1,
      error: aborted,
    });
    scope.onRetry?.();
    await setTimeout(5 + Math.random() * 20 * (retry + 1));
  }
}

/**
 * One transaction of a mutation that keeps its own (meta `ownTransaction`), run as the shared wrapper
 * runs a mutation's: `work`'s rows commit together or not at all, unless it is refused with an
 * AppError that asks to keep them (`keepChanges`: they commit, then the refusal is thrown); aborted
 * by PostgreSQL, it is run again from an empty identity map (`retryingAborted`).
 */
export async function retriedTransaction<T>(em: EntityManager, scope: RetryScope, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  const outcome = await retryingAborted(scope, async (retry) => {
    const kept: { refusal?: AppError } = {};
    const value = await em.transactional(
      async (tx) => {
        try {
          return await work(tx);
        } catch (error) {
          if (!(error instanceof AppError) || !error.keepChanges) throw error;
          await tx.flush();
          kept.refusal = error;
          return null;
        }
      },
      { clear: retry > 0 },
    );
    return kept.refusal ? { ok: false as const, error: kept.refusal } : { ok: true as const, value: value as T };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}
