import { availableParallelism } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { hashPassword, hashingSlots, newPasswordsIn, verifyPassword, withPasswordsHashed } from './passwords.ts';

// The slots test samples every millisecond how many hashes run at once: it needs hashes that take the
// service's real time, not test/setup/cheap-hashing.ts's fraction of a millisecond.
vi.unmock('argon2');

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

  it('hashes ahead only what a valid input could hold, and answers a password hashed ahead in any Unicode form at once', async () => {
    const decomposed = 'cafe\u0301 au lait';
    expect(
      newPasswordsIn({ owner: { password: decomposed }, other: 'x'.repeat(20) }, ['owner.password', 'missing', 'other.deeper']),
    ).toEqual([decomposed]);
    expect(newPasswordsIn({ password: 'short' }, ['password'])).toEqual([]);
    expect(newPasswordsIn({ password: 'x'.repeat(129) }, ['password'])).toEqual([]);
    expect(newPasswordsIn({ password: 'x'.repeat(1 << 20) }, ['password'])).toEqual([]);
    expect(newPasswordsIn({ password: 12345678 }, ['password'])).toEqual([]);

    const hash = await withPasswordsHashed([decomposed], async () => {
      const answered = hashPassword('caf\u00e9 au lait');
      // Nothing new was queued: the hash made ahead answered.
      expect(hashingSlots.activeCount + hashingSlots.pendingCount).toBe(0);
      return answered;
    });
    expect(await verifyPassword(hash, decomposed)).toBe('current');
  });
});
