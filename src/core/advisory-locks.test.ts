import { describe, expect, it } from 'vitest';
import { ADVISORY_LOCKS } from './advisory-locks.ts';

describe('advisory locks', () => {
  it('gives every lock a number of its own (session and transaction locks share one key space)', () => {
    const numbers = Object.values(ADVISORY_LOCKS);
    expect(new Set(numbers).size).toBe(numbers.length);
  });
});
