import { availableParallelism } from 'node:os';
import { hashingSlots } from '../../src/core/passwords.ts';

/**
 * Takes every Argon2id slot, starts `count` calls of `start` (each hashes, so each waits for a slot),
 * and runs `meanwhile` while they all wait; then frees the slots and answers what `meanwhile` answered
 * and what the calls did. A call that holds a database connection while it waits leaves the other
 * calls or `meanwhile` without one: that is an error after 10 s, not a hung test.
 */
export async function whileHashesWait<T, R>(
  count: number,
  start: (index: number) => Promise<T>,
  meanwhile: () => Promise<R>,
): Promise<{ meanwhile: R; results: T[] }> {
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = Array.from({ length: availableParallelism() }, () => hashingSlots(() => gate));
  const waiting = Array.from({ length: count }, (_, index) => start(index));
  let answered: R;
  const deadline = Date.now() + 10_000;
  const pastDeadline = () => new Error('the calls or the request meanwhile got no database connection within 10 s while the hashes waited');
  try {
    while (hashingSlots.pendingCount < count) {
      if (Date.now() > deadline) throw pastDeadline();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(pastDeadline()), Math.max(0, deadline - Date.now()));
    });
    answered = await Promise.race([meanwhile(), timeout]).finally(() => clearTimeout(timer));
  } finally {
    release();
    await Promise.all(held);
  }
  return { meanwhile: answered, results: await Promise.all(waiting) };
}
