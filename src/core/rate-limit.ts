import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { BatchedWindowLimiter } from './batched-limit.ts';
import { AppError } from './errors.ts';

/** The spec's limits, by name. Windows are in seconds. */
export const LIMITS = {
  global: { points: 1000, duration: 60 },
  login: { points: 10, duration: 60 },
  password: { points: 10, duration: 60 },
  /** Not in the spec's table: invitation tokens are guessed no faster than reset tokens, on their own count. */
  invitationAccept: { points: 10, duration: 60 },
  /** `/api/v1/auth/oauth/*`: every route under the prefix (sign-in, callback, exchange, the providers' configuration). */
  socialAuth: { points: 30, duration: 60 },
  /**
   * Not in the spec's table: the SSO browser routes (`/api/v1/auth/sso/*`) at the same rate on their own
   * count, so an organization's SSO traffic does not spend the social budget, nor the other way round.
   */
  ssoAuth: { points: 30, duration: 60 },
  mfaVerify: { points: 5, duration: 300 },
  oauthToken: { points: 60, duration: 60 },
} as const;

export type LimitName = keyof typeof LIMITS;

export interface LimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  /** This refusal is the window's first (one per key and window, across instances): worth recording once. */
  firstRefusal?: boolean;
}

export interface RateLimits {
  consume(name: LimitName, key: string): Promise<LimitDecision>;
  /** Pushes the locally batched global counts to the shared store now (tests; shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Counters live in Redis when it is configured, so every instance shares them; otherwise in process.
 * If Redis fails, an in-process limiter with the same limits takes over at once (not after a timeout:
 * `rejectIfRedisNotReady`, and core/redis.ts fails commands fast) rather than letting requests through
 * unlimited; while Redis is down each instance counts on its own. Once it is back the shared counts
 * resume by themselves.
 * The global limit, checked on every request, is counted locally and shared in batches (batched-limit.ts).
 */
export function createRateLimits(
  redis: Redis | null,
  prefix: string,
  onError: (error: unknown) => void,
  onLimited: (name: LimitName) => void = () => undefined,
): RateLimits {
  const global = new BatchedWindowLimiter(redis, `${prefix}:global`, LIMITS.global.points, LIMITS.global.duration * 1000, onError);
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  for (const [name, { points, duration }] of Object.entries(LIMITS) as [LimitName, (typeof LIMITS)[LimitName]][]) {
    if (name === 'global') continue;
    const keyPrefix = `${prefix}:${name}`;
    const memory = new RateLimiterMemory({ keyPrefix, points, duration });
    limiters.set(
      name,
      redis
        ? new RateLimiterRedis({ storeClient: redis, keyPrefix, points, duration, insuranceLimiter: memory, rejectIfRedisNotReady: true })
        : memory,
    );
  }
  return {
    flush: () => global.flush(),
    close: () => global.close(),
    async consume(name, key) {
      if (name === 'global') {
        const decision = global.consume(key);
        if (!decision.allowed) onLimited(name);
        return decision;
      }
      const limiter = limiters.get(name) as RateLimiterAbstract;
      const limit = LIMITS[name].points;
      try {
        const res = await limiter.consume(key);
        return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: Math.ceil(res.msBeforeNext / 1000) };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        onLimited(name);
        return {
          allowed: false,
          limit,
          remaining: 0,
          resetSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)),
          firstRefusal: rejection.consumedPoints === limit + 1,
        };
      }
    },
  };
}

export function rateLimitHeaders(decision: LimitDecision): Record<string, string> {
  return {
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
    ...(decision.allowed ? {} : { 'Retry-After': String(decision.resetSeconds) }),
  };
}

export function rateLimitedError(decision: LimitDecision, options: { keepChanges?: boolean } = {}): AppError {
  return new AppError('RATE_LIMITED', 'Too many requests; try again later', { headers: rateLimitHeaders(decision), ...options });
}
