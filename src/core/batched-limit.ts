import type { Redis } from 'ioredis';
import type { LimitDecision } from './rate-limit.ts';

interface WindowCount {
  /** The window starts at a key's first hit (so a burst is never split by a clock boundary) and ends here. */
  resetAt: number;
  /** The shared total this process last read from Redis (its own flushed hits included). */
  known: number;
  /** Hits admitted here and not yet added to the shared total. */
  pending: number;
}

/**
 * Adds each key's hits to its shared total in one script run for the whole batch (a flush under load
 * carries a key per client address: one command per key, let alone three, cost more than the counting).
 * The shared window starts with the first hit any instance reports (SET … NX PX) and each instance
 * adopts its end (PTTL), so all of them reset together. KEYS: the counters; ARGV: the window in ms,
 * then each key's hits. Answers total, ttl for each key in turn. (The keys of one call must live on one
 * node: this is for a single Redis, as is the rest of the service's Redis state.)
 */
const WINDOW_ADD = `local out = {}
for i, key in ipairs(KEYS) do
  redis.call('SET', key, 0, 'PX', ARGV[1], 'NX')
  out[2 * i - 1] = redis.call('INCRBY', key, ARGV[i + 1])
  out[2 * i] = redis.call('PTTL', key)
end
return out`;

/** The script as a command on the client (ioredis sends EVALSHA, and the script itself once if Redis lacks it). */
interface WindowAdding {
  windowAdd(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
}

/** Keys per script run, so that a flush after a burst of many addresses never holds Redis for long. */
const KEYS_PER_CALL = 500;

/**
 * A window counter for the global limit (1,000 calls per minute per IP), which every request
 * passes through. Asking Redis on every request cost a round trip and a script run per call — about a
 * tenth of the server's CPU under load. Here each process counts in memory and adds its counts to the
 * shared Redis total in one script run per flush (every 100 ms; 500 keys per run), deciding on the last
 * shared total it read plus its own unflushed hits. A window opens at a key's first hit and lasts a minute. Across instances the limit can be overshot by what the others admitted
 * since their last flush, which is acceptable for a coarse abuse limit; the security limits (sign-in,
 * password, second factor, token endpoint) stay exact, one Redis call per attempt (rate-limit.ts).
 * Without Redis, or while Redis fails, the local count alone decides: never unlimited.
 */
export class BatchedWindowLimiter {
  /** Every key with an open window, oldest window first (a window reopened is moved to the end). */
  private readonly counts = new Map<string, WindowCount>();
  /**
   * Keys hit since the last flush: a flush reads these, not every open window (under load the windows
   * are one per client address of the last minute, hundreds of thousands, ten flushes a second).
   */
  private readonly hit = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly redis: Redis | null,
    private readonly keyPrefix: string,
    private readonly points: number,
    private readonly windowMs: number,
    private readonly onError: (error: unknown) => void,
    flushEveryMs = 100,
    private readonly now: () => number = Date.now,
  ) {
    if (redis && !('windowAdd' in redis)) redis.defineCommand('windowAdd', { lua: WINDOW_ADD });
    this.timer = setInterval(() => void this.flush(), flushEveryMs);
    this.timer.unref();
  }

  consume(key: string): LimitDecision {
    const now = this.now();
    let count = this.counts.get(key);
    if (!count || now >= count.resetAt) {
      count = { resetAt: now + this.windowMs, known: 0, pending: 0 };
      this.counts.delete(key);
      this.counts.set(key, count);
    }
    const used = count.known + count.pending;
    const resetSeconds = Math.max(1, Math.ceil((count.resetAt - now) / 1000));
    if (used >= this.points) return { allowed: false, limit: this.points, remaining: 0, resetSeconds };
    count.pending += 1;
    this.hit.add(key);
    return { allowed: true, limit: this.points, remaining: this.points - used - 1, resetSeconds };
  }

  /** Adds this process's counts to the shared totals and reads them back; one flush at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const now = this.now();
    // Closed windows go from the front, up to the first open one (a window that adopted another
    // instance's end may close a little out of order; it goes in a later flush).
    for (const [key, count] of this.counts) {
      if (now < count.resetAt) break;
      this.counts.delete(key);
    }
    const batch: { key: string; count: WindowCount; sent: number }[] = [];
    for (const key of this.hit) {
      const count = this.counts.get(key);
      if (count && now < count.resetAt && count.pending > 0) batch.push({ key, count, sent: count.pending });
    }
    this.hit.clear();
    // The hits being sent move from pending to known before the round trip, not after it: while the
    // reply is awaited they must still count, or every flush briefly forgets them and a burst gets
    // past the limit (the 1,001st call was admitted under load).
    for (const { count, sent } of batch) {
      count.pending -= sent;
      count.known += sent;
    }
    // Without Redis, or while it is down (core/redis.ts logs that once), the count stays local
    // instead of failing a flush, and warning, every 100 ms.
    if (batch.length === 0 || !this.redis || this.redis.status !== 'ready') return;
    const redis = this.redis as Redis & WindowAdding;
    for (let start = 0; start < batch.length; start += KEYS_PER_CALL) {
      const chunk = batch.slice(start, start + KEYS_PER_CALL);
      try {
        const results = await redis.windowAdd(
          chunk.length,
          ...chunk.map(({ key }) => `${this.keyPrefix}:${key}`),
          this.windowMs,
          ...chunk.map(({ sent }) => sent),
        );
        chunk.forEach(({ count }, i) => {
          // The shared total includes this process's hits; the other instances' are what it adds.
          count.known = Math.max(count.known, Number(results[2 * i]));
          const ttl = Number(results[2 * i + 1]);
          if (ttl > 0) count.resetAt = now + ttl;
        });
      } catch (error) {
        this.onError(error);
        return;
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
