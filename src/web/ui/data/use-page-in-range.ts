import { useEffect, useEffectEvent } from 'react';

interface ListPage {
  data: readonly unknown[];
  meta: { total: number; page: number; per_page: number };
}

/**
 * A page past the last one (its last row was just deleted, or an old link or a typed `?page=` names it)
 * moves to the last page that has rows, instead of calling the whole list empty. `onPage` should
 * replace the address rather than add to the history, so Back does not return to the empty page.
 */
export function usePageInRange(page: ListPage | undefined, onPage: (page: number) => void): void {
  const last = page ? Math.max(1, Math.ceil(page.meta.total / page.meta.per_page)) : 1;
  const pastTheEnd = page !== undefined && page.data.length === 0 && page.meta.total > 0 && page.meta.page > last;
  const goTo = useEffectEvent(onPage);
  useEffect(() => {
    if (pastTheEnd) goTo(last);
  }, [pastTheEnd, last]);
}
