import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useDebounced } from '../data/use-debounced.ts';
import { ErrorAlert } from '../feedback/ErrorAlert.tsx';
import { SelectField, type Option } from './SelectField.tsx';
import { TextField } from './TextField.tsx';

/** How many matches a picker offers at a time: a search narrows them, nothing reads the whole list. */
export const PICKER_PAGE = 20;

/** Waits this long after the last key before asking the API. */
const TYPING_PAUSE_MS = 250;

interface PickerPage<T> {
  data: T[];
  meta: { total: number };
}

interface SearchPickerProps<T> {
  /** The select's label ("Role"); the search field is "Find a …" with `noun`. */
  label: string;
  /** One item, in lower case ("role"), and many ("roles"). */
  noun: { one: string; many: string };
  /** What the search looks in ("Part of the role's name or description"). */
  searchHint: string;
  /** The cache key of the list read (`['roles.list']`): the search and page size are added to it. */
  queryKey: readonly unknown[];
  /** The first page of the list, filtered by `q` on the server (its `q` is the list's own search). */
  search(query: { q?: string; page: number; per_page: number }): Promise<PickerPage<T>>;
  toOption(item: T): Option<string>;
  /** Items not to offer (already held); they still count in the API's total. */
  exclude?(item: T): boolean;
  /** The first option, chosen when nothing is ("Choose a role"). */
  none: string;
  value: string;
  onChange(value: string): void;
  /** The API's name of the field, for its problems. */
  name?: string;
  required?: boolean;
  enabled?: boolean;
}

/**
 * A select over a list of the workspace that may be long: it offers the list's first page, and as the
 * person types, the first page of the server's matches for what they typed. The item chosen stays
 * offered while they search on, so a new search does not silently change the choice.
 */
export function SearchPicker<T>(props: SearchPickerProps<T>) {
  const { label, noun, searchHint, queryKey, search, toOption, exclude, none, value, onChange, name, required, enabled = true } = props;
  const [typed, setTyped] = useState('');
  const [chosen, setChosen] = useState<Option<string> | null>(null);
  const q = useDebounced(typed.trim(), TYPING_PAUSE_MS);
  const input = { ...(q ? { q } : {}), page: 1, per_page: PICKER_PAGE };
  const matches = useQuery({ queryKey: [...queryKey, input], queryFn: () => search(input), placeholderData: keepPreviousData, enabled });

  const found = (matches.data?.data ?? []).filter((item) => !exclude?.(item)).map(toOption);
  const kept = chosen && chosen.value === value && value !== '' && !found.some((o) => o.value === value) ? [chosen] : [];
  const options = [{ value: '', label: none }, ...kept, ...found];
  const total = matches.data?.meta.total ?? 0;
  const shown = matches.data?.data.length ?? 0;
  const hint = !matches.data
    ? undefined
    : total === 0
      ? `No ${noun.many} match "${q}".`
      : shown < total
        ? `The first ${shown} of ${total} ${noun.many}${q ? ` matching "${q}"` : ''}: type more to find the others.`
        : undefined;

  return (
    <>
      <TextField
        label={`Find a ${noun.one}`}
        type="search"
        value={typed}
        onChange={setTyped}
        autoComplete="off"
        hint={searchHint}
        // Enter in the search would send the form with whatever is chosen; the search runs as they type.
        onKeyDown={(event) => {
          if (event.key === 'Enter') event.preventDefault();
        }}
      />
      {matches.isError ? <ErrorAlert error={matches.error} /> : null}
      <SelectField
        label={label}
        name={name}
        value={value}
        options={options}
        onChange={(next) => {
          setChosen(options.find((o) => o.value === next) ?? null);
          onChange(next);
        }}
        hint={hint}
        required={required}
      />
    </>
  );
}
