import { availableParallelism } from 'node:os';
import { hashingSlots } from '../../src/core/passwords.ts';

/** Every Argon2id slot, taken (behind whatever hashes are already queued) until `release`. */
function holdEverySlot() {
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  let holding = 0;
  const held = Array.from({ length: availableParallelism() }, () =>
    hashingSlots(async () => {
      holding += 1;
      await gate;
    }),
  );
  return {
    holdsAll: () => holding === held.length,
    release: async () => {
      open();
      await Promise.all(held);
    },
  };
}

/**
 * Takes every Argon2id slot, starts `count` calls of `start` (each hashes, so each waits for a slot),
 * and runs `meanwhile` while they all wait; then frees the slots and answers what `meanwhile` answered
 * and what the calls did. A call that holds a database connection while it waits leaves the other
 * calls or `meanwhile` without one: that is an error after 10 s, not a hung test.
 *
 * `after`: the calls' first `after` hashes are let through before the slots are taken again, so that
 * the wait observed is that of each call's next hash (a password change's second one, say).
 */
export async function whileHashesWait<T, R>(
  count: number,
  start: (index: number) => Promise<T>,
  meanwhile: () => Promise<R>,
  { after = 0 }: { after?: number } = {},
): Promise<{ meanwhile: R; results: T[] }> {
  const holds = [holdEverySlot()];
  const waiting = Array.from({ length: count }, (_, index) => start(index));
  let answered: R;
  const deadline = Date.now() + 10_000;
  const pastDeadline = () => new Error('the calls or the request meanwhile got no database connection within 10 s while the hashes waited');
  const until = async (done: () => boolean) => {
    while (!done()) {
      if (Date.now() > deadline) throw pastDeadline();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  try {
    if (after > 0) {
      await until(() => hashingSlots.pendingCount >= after);
      // Queued behind those hashes, the new hold takes every slot once they are done.
      holds.push(holdEverySlot());
      await holds[0]?.release();
    }
    const hold = holds[holds.length - 1];
    await until(() => (hold?.holdsAll() ?? true) && hashingSlots.pendingCount >= count);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(pastDeadline()), Math.max(0, deadline - Date.now()));
    });
    answered = await Promise.race([meanwhile(), timeout]).finally(() => clearTimeout(timer));
  } finally {
    await Promise.all(holds.map((hold) => hold.release()));
  }
  return { meanwhile: answered, results: await Promise.all(waiting) };
}
