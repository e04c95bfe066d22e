import { describe, expect, it } from 'vitest';
import { BatchedCall } from './batched-call.ts';

/** A batcher that doubles numbers, failing any run that holds a negative one; records each run's inputs. */
function doubling() {
  const runs: number[][] = [];
  const batcher = new BatchedCall(async (inputs: number[]) => {
    runs.push(inputs);
    if (inputs.some((n) => n < 0)) throw new Error(`negative in ${inputs.join(',')}`);
    return inputs.map((n) => n * 2);
  });
  return { runs, batcher };
}

describe('BatchedCall', () => {
  it('runs the calls of one turn together and answers each its own output', async () => {
    const { runs, batcher } = doubling();
    const answers = await Promise.all([1, 2, 3].map((n) => batcher.call(n)));
    expect(answers).toEqual([2, 4, 6]);
    expect(runs).toEqual([[1, 2, 3]]);

    expect(await batcher.call(5)).toBe(10);
    expect(runs).toHaveLength(2);
  });

  it('runs a failed batch again call by call, so only the failing call fails', async () => {
    const { runs, batcher } = doubling();
    const answers = await Promise.allSettled([1, -1, 3].map((n) => batcher.call(n)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message))).toEqual([2, 'negative in -1', 6]);
    expect(runs).toEqual([[1, -1, 3], [1], [-1], [3]]);
  });

  it('splits a turn of more than 100 calls into runs of at most 100', async () => {
    const { runs, batcher } = doubling();
    const answers = await Promise.all(Array.from({ length: 250 }, (_, i) => batcher.call(i)));
    expect(answers).toEqual(Array.from({ length: 250 }, (_, i) => i * 2));
    expect(runs.map((run) => run.length)).toEqual([100, 100, 50]);
  });
});
