import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.ts';

/**
 * A command gets this long before its caller falls back (rate limits to their in-process count). Redis
 * answers in well under a millisecond; a reply that takes half a second means it is hung or unreachable.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * Redis holds only what may be lost (rate-limit counters, caches); PostgreSQL decides the rest. So
 * nothing waits for it: while it is down a command fails at once (no offline queue, no resend after
 * a reconnect, which could also count a hit twice) and its caller uses its local fallback, and the
 * client reconnects every second at most, so the service shares its counters again by itself as soon
 * as Redis is back. ioredis's defaults (queue commands while disconnected, resend up to 20 times,
 * reconnect backoff up to 5 s) made each sign-in wait 10–15 s during an outage (test/faults).
 */
export const REDIS_OPTIONS: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  connectTimeout: 2_000,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
};

export async function connectRedis(url: string, log: Logger): Promise<Redis> {
  const redis = new Redis(url, REDIS_OPTIONS);
  let down = false;
  redis.on('error', (error: Error) => {
    // One line per outage, not one per reconnect attempt.
    if (!down) log.warn('redis error', { error: error.message });
    down = true;
  });
  redis.on('ready', () => {
    if (down) log.info('redis reconnected');
    down = false;
  });
  await redis.connect();
  return redis;
}
