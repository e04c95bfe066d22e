import { useLocation, useSearchParams } from 'react-router';

/** How one of a list's address parameters is read: what its absence means, and which values are readable. */
export interface ListParam<V extends string> {
  /** What an address without it (or with a value `read` refuses) means; it is left out of the address. */
  fallback: V;
  read(raw: string): V | undefined;
}

/** Free text, such as a search; absent is ''. */
export function text(): ListParam<string> {
  return { fallback: '', read: (raw) => raw };
}

/**
 * One of `values`, or '' for "any". Absent is `fallback`; when that is not '', "any" is written as an
 * empty value (`?status=`) so that it survives a reload.
 */
export function oneOf<V extends string>(values: readonly V[], fallback: V | '' = ''): ListParam<V | ''> {
  return { fallback, read: (raw) => (raw === '' ? '' : values.find((v) => v === raw)) };
}

export type ListSpec = Record<string, ListParam<string>>;

/** A list's filters as its spec reads them, and its page (from 1). */
export type ListParams<S extends ListSpec> = { [K in keyof S]: S[K] extends ListParam<infer V> ? V : never } & { page: number };

export type SetListParams<S extends ListSpec> = (next: Partial<ListParams<S>>, options?: { replace?: boolean }) => void;

/** `?page=` as a page number; anything but plain digits naming a page from 1 up is the first page. */
function pageOf(raw: string | null): number {
  const page = raw !== null && /^\d+$/.test(raw) ? Number(raw) : 1;
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

/** The filters and page an address names; missing or unreadable values are their fallbacks. */
export function readListParams<S extends ListSpec>(search: URLSearchParams, spec: S): ListParams<S> {
  const values: Record<string, string | number> = {};
  for (const [key, param] of Object.entries(spec)) {
    const raw = search.get(key);
    values[key] = raw === null ? param.fallback : (param.read(raw) ?? param.fallback);
  }
  values.page = pageOf(search.get('page'));
  return values as ListParams<S>;
}

/**
 * The address query for these filters and page: only what differs from the fallbacks, so page 1 of an
 * unfiltered list is bare. The parameters of `current` that are not the list's (another section's,
 * a notice's) are kept as they are, ahead of the list's own.
 */
export function listSearch<S extends ListSpec>(values: ListParams<S>, spec: S, current = new URLSearchParams()): URLSearchParams {
  const owned = new Set([...Object.keys(spec), 'page']);
  const search = new URLSearchParams([...current].filter(([key]) => !owned.has(key)));
  for (const [key, param] of Object.entries(spec)) {
    const value = values[key];
    if (typeof value === 'string' && value !== param.fallback) search.set(key, value);
  }
  if (values.page > 1) search.set('page', String(values.page));
  return search;
}

/**
 * A paged list's filters and page, kept in the address so that reload, Back/Forward and links keep
 * them; the address's other parameters stay as they are. A change of filter goes back to page 1. Each change adds a history entry unless `replace`
 * (use it for corrections, such as `usePageInRange` moving off a page past the end). A change keeps the
 * location state the screen was opened with (ui/navigation/list-links.tsx: the list an item was opened
 * from), so paging an item's own list (an endpoint's deliveries) keeps its way back.
 */
export function useListParams<S extends ListSpec>(spec: S): [ListParams<S>, SetListParams<S>] {
  const [search, setSearch] = useSearchParams();
  const { state } = useLocation();
  const values = readListParams(search, spec);
  const update: SetListParams<S> = (next, options) =>
    setSearch(listSearch({ ...values, page: 1, ...next }, spec, search), { replace: options?.replace ?? false, state });
  return [values, update];
}
