import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hashPassword, hashingSlots, verifyPassword } from './passwords.ts';

describe('password hashing', () => {
  it('runs at most one Argon2id computation per core, the others waiting their turn, each answered right', async () => {
    const cores = Math.max(1, availableParallelism());
    const hash = await hashPassword('correct horse battery');
    let mostRunning = 0;
    let mostWaiting = 0;
    const sampler = setInterval(() => {
      mostRunning = Math.max(mostRunning, hashingSlots.activeCount);
      mostWaiting = Math.max(mostWaiting, hashingSlots.pendingCount);
    }, 1);
    const attempts = Array.from({ length: cores * 3 }, (_, i) => (i % 2 === 0 ? 'correct horse battery' : `wrong ${i}`));
    const answers = await Promise.all(attempts.map((password) => verifyPassword(hash, password)));
    clearInterval(sampler);
    expect(answers).toEqual(attempts.map((_, i) => (i % 2 === 0 ? 'current' : false)));
    expect(mostRunning).toBe(cores);
    expect(mostWaiting).toBeGreaterThan(0);
    expect(hashingSlots.activeCount + hashingSlots.pendingCount).toBe(0);
  });
});
