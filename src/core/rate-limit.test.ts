import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRateLimits, type RateLimits } from './rate-limit.ts';
import { REDIS_OPTIONS } from './redis.ts';

describe('rate limits while Redis is unreachable', () => {
  const opened: { limits: RateLimits; redis: Redis }[] = [];
  afterEach(async () => {
    for (const { limits, redis } of opened.splice(0)) {
      await limits.close();
      redis.disconnect();
    }
  });

  it('fall back to the in-process count at once: the 11th sign-in is refused, and nobody waits for Redis', async () => {
    // Nothing listens on port 1: the client keeps trying to connect, as during an outage.
    const redis = new Redis({ ...REDIS_OPTIONS, port: 1 });
    redis.on('error', () => undefined);
    redis.connect().catch(() => undefined);
    const limits = createRateLimits(redis, 'test:down', () => undefined);
    opened.push({ limits, redis });

    const started = performance.now();
    const decisions = [];
    for (let i = 0; i < 11; i += 1) decisions.push(await limits.consume('login', '192.0.2.1'));
    expect(decisions.map((d) => d.allowed)).toEqual([...Array(10).fill(true), false]);
    expect(decisions[10]?.resetSeconds).toBeGreaterThan(0);
    const mfa = [];
    for (let i = 0; i < 6; i += 1) mfa.push((await limits.consume('mfaVerify', 'user:usr_1')).allowed);
    expect(mfa).toEqual([true, true, true, true, true, false]);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
