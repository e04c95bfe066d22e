import { describe, expect, it } from 'vitest';
import { isId, newId } from './ids.ts';

describe('newId', () => {
  it('makes ids of the documented shape, each random part different, over many refills of the random pool', () => {
    const ids = Array.from({ length: 5000 }, () => newId('usr'));
    for (const id of ids) expect(isId('usr', id)).toBe(true);
    expect(new Set(ids.map((id) => id.slice(14))).size).toBe(ids.length);
  });

  it('sorts by creation time', async () => {
    const first = newId('evt');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = newId('evt');
    expect(first.slice(0, 14) < second.slice(0, 14)).toBe(true);
  });
});
