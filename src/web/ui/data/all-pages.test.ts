import { describe, expect, it } from 'vitest';
import { readAllPages } from './all-pages.ts';

/** A list of `total` numbered items served a page at a time, recording which pages were asked for. */
function served(total: number) {
  const asked: number[] = [];
  const items = Array.from({ length: total }, (_, i) => i + 1);
  const readPage = ({ page, per_page }: { page: number; per_page: number }) => {
    asked.push(page);
    return Promise.resolve({ data: items.slice((page - 1) * per_page, page * per_page), meta: { total, page, per_page } });
  };
  return { asked, readPage };
}

describe('reading every page of a list', () => {
  it('reads pages of 100 until the total, and no page more', async () => {
    for (const [total, pages] of [
      [0, [1]],
      [99, [1]],
      [100, [1]],
      [101, [1, 2]],
      [250, [1, 2, 3]],
    ] as const) {
      const list = served(total);
      const all = await readAllPages(list.readPage);
      expect(all.data).toHaveLength(total);
      expect(all.data.at(-1)).toBe(total === 0 ? undefined : total);
      expect(list.asked).toEqual(pages);
    }
  });

  it('stops at a short page even when the total said there were more (rows removed while it read)', async () => {
    const asked: number[] = [];
    const all = await readAllPages(({ page, per_page }) => {
      asked.push(page);
      const data = page === 1 ? Array.from({ length: 100 }, (_, i) => i) : [100];
      return Promise.resolve({ data, meta: { total: 300, page, per_page } });
    });
    expect(asked).toEqual([1, 2]);
    expect(all.data).toHaveLength(101);
  });
});
