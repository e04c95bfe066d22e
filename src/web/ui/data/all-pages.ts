/** The largest page the API serves (CONTRACT: `per_page` at most 100). */
export const LARGEST_PAGE = 100;

interface Page<T> {
  data: T[];
  meta: { total: number; page: number; per_page: number };
}

/**
 * Every item of a paged API list, for a picker or a lookup that must not stop at one page: reads pages
 * of 100 from the first until one comes back short or the total is reached. Items added or removed
 * while it reads can shift an item across a page boundary (read twice, or missed until the next read).
 */
export async function readAllPages<T>(readPage: (query: { page: number; per_page: number }) => Promise<Page<T>>): Promise<{ data: T[] }> {
  const data: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await readPage({ page, per_page: LARGEST_PAGE });
    data.push(...answer.data);
    if (answer.data.length < LARGEST_PAGE || page * LARGEST_PAGE >= answer.meta.total) return { data };
  }
}
