import { describe, expect, it } from 'vitest';
import { ExpiringCache } from './expiring-cache.ts';

describe('ExpiringCache', () => {
  it('answers a value until its time, then forgets it', () => {
    const cache = new ExpiringCache<string>(10);
    cache.set('a', 'first', 1_000);
    expect(cache.get('a', 999)).toBe('first');
    expect(cache.get('a', 1_000)).toBeUndefined();
    expect(cache.get('a', 0)).toBeUndefined();
  });

  it('holds at most its bound, dropping the oldest entry first; setting again makes an entry the newest', () => {
    const cache = new ExpiringCache<number>(2);
    cache.set('a', 1, 100);
    cache.set('b', 2, 100);
    cache.set('a', 3, 100);
    cache.set('c', 4, 100);
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)]).toEqual([3, undefined, 4]);
  });
});
