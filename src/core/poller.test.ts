import { describe, expect, it } from 'vitest';
import { Poller } from './poller.ts';

/** A poller whose rounds each wait until the test ends them; records how many ran at once, at most. */
function gated() {
  const ends: (() => void)[] = [];
  let running = 0;
  let started = 0;
  let most = 0;
  const poller = new Poller(
    () =>
      new Promise<void>((resolve) => {
        running += 1;
        started += 1;
        most = Math.max(most, running);
        ends.push(() => {
          running -= 1;
          resolve();
        });
      }),
    60_000,
    (error) => {
      throw error;
    },
  );
  /** Ends the oldest round still running, then lets the poller start the next one. */
  const endOne = async () => {
    (ends.shift() as () => void)();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { poller, endOne, counts: () => ({ started, running, most }) };
}

describe('Poller.runNow', () => {
  it('waits for the round in progress, then runs its own; a kick meanwhile (the timer, a commit) runs after it, never beside it', async () => {
    const { poller, endOne, counts } = gated();
    poller.start();
    expect(counts()).toEqual({ started: 1, running: 1, most: 1 });

    let done = false;
    const ran = poller.runNow().then(() => (done = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(counts()).toEqual({ started: 1, running: 1, most: 1 });

    await endOne();
    expect(counts()).toEqual({ started: 2, running: 1, most: 1 });
    poller.kick();
    await new Promise((resolve) => setImmediate(resolve));
    expect(counts()).toEqual({ started: 2, running: 1, most: 1 });
    expect(poller.busy).toBe(true);

    await endOne();
    expect(done).toBe(true);
    expect(counts()).toEqual({ started: 3, running: 1, most: 1 });
    await endOne();
    expect(poller.busy).toBe(false);
    await ran;
    await poller.stop();
  });

  it('rejects with its own round’s error; a kicked round’s error goes to onError', async () => {
    const failures: unknown[] = [];
    let calls = 0;
    const poller = new Poller(
      async () => {
        calls += 1;
        throw new Error(`round ${calls}`);
      },
      60_000,
      (error) => failures.push(error),
    );
    await expect(poller.runNow()).rejects.toThrow('round 1');
    poller.kick();
    await poller.idle();
    expect(failures.map((e) => (e as Error).message)).toEqual(['round 2']);
    expect(poller.busy).toBe(false);
  });
});
