import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchedWindowLimiter } from './batched-limit.ts';
import { needsRedis } from '../../test/helpers/needs.ts';

describe('BatchedWindowLimiter', () => {
  const limiters: BatchedWindowLimiter[] = [];
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.close()));
  });

  function limiter(redis: Redis | null, now: () => number, errors: unknown[] = []) {
    const created = new BatchedWindowLimiter(redis, 'test:batched', 3, 60_000, (e) => errors.push(e), 60_000, now);
    limiters.push(created);
    return created;
  }

  it('admits the limit per key in a window opened by its first hit, then refuses with the seconds left', () => {
    let now = 60_000 * 1000 - 500; // a burst across a minute boundary is still one window
    const l = limiter(null, () => now);
    expect(l.consume('ip').allowed).toBe(true);
    now += 15_000;
    expect([1, 2].map(() => l.consume('ip').allowed)).toEqual([true, true]);
    expect(l.consume('ip')).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 45 });
    expect(l.consume('other ip').remaining).toBe(2);
    now += 45_000;
    expect(l.consume('ip')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('still counts the hits it is sending while the shared total is awaited', async () => {
    // A Redis whose reply to the flush arrives only when the test says so (a slow round trip under load).
    let reply: (results: number[]) => void = () => undefined;
    const slow = {
      status: 'ready',
      defineCommand: () => undefined,
      windowAdd: () => new Promise<number[]>((resolve) => (reply = resolve)),
    } as unknown as Redis;
    const l = limiter(slow, () => 5_000);
    expect([1, 2, 3].map(() => l.consume('ip').allowed)).toEqual([true, true, true]);
    const flushing = l.flush();
    const whileAwaited = l.consume('ip').allowed;
    reply([3, 60_000]);
    await flushing;
    expect(whileAwaited).toBe(false);
    expect(l.consume('ip').allowed).toBe(false);
  });

  it('keeps limiting on its own count when Redis is unreachable: never unlimited', async () => {
    const dead = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const errors: unknown[] = [];
    const l = limiter(dead, () => 5_000, errors);
    l.consume('ip');
    l.consume('ip');
    await l.flush();
    l.consume('ip');
    expect(l.consume('ip').allowed).toBe(false);
    await l.flush();
    expect(l.consume('ip').allowed).toBe(false);
    dead.disconnect();
  });
});

needsRedis(describe, 'the limiter under test counts there')('BatchedWindowLimiter on Redis', () => {
  it('shares the counts of more keys than one script run takes, each key its own total', async () => {
    const redis = new Redis(process.env.REDIS_URL as string);
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    const prefix = `test:batched:chunks:${Date.now()}`;
    const [a, b] = [0, 1].map(() => new BatchedWindowLimiter(redis, prefix, 2, 60_000, (e) => expect(e).toBeUndefined(), 60_000));
    const keys = Array.from({ length: 1_201 }, (_, i) => `203.0.113.${i}`);
    try {
      // A counts a hit on every third key, B one on every key: once both have flushed, B has read a
      // shared total of 2 for every third key and 1 for the others, in the third run of 500 keys as in
      // the first, so it refuses exactly every third key.
      const hitByA = (i: number) => i % 3 === 0;
      keys.forEach((key, i) => hitByA(i) && expect(a?.consume(key).allowed).toBe(true));
      await a?.flush();
      for (const key of keys) expect(b?.consume(key).allowed).toBe(true);
      await b?.flush();
      expect(keys.filter((key) => !b?.consume(key).allowed)).toEqual(keys.filter((_, i) => hitByA(i)));
      expect(await redis.get(`${prefix}:${keys[1_200]}`)).toBe('2');
      expect(await redis.get(`${prefix}:${keys[1_199]}`)).toBe('1');
      expect(await redis.pttl(`${prefix}:${keys[0]}`)).toBeGreaterThan(50_000);
    } finally {
      await a?.close();
      await b?.close();
      redis.disconnect();
    }
  });
});
