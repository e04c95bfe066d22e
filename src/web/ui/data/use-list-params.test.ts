import { describe, expect, it } from 'vitest';
import { listSearch, oneOf, readListParams, text } from './use-list-params.ts';

const USERS = { q: text(), status: oneOf(['active', 'locked'] as const) };
const INVITATIONS = { status: oneOf(['pending', 'accepted'] as const, 'pending') };

const read = <S extends Parameters<typeof readListParams>[1]>(query: string, spec: S) => readListParams(new URLSearchParams(query), spec);

describe("a list's filters and page in the address", () => {
  it('reads what the address names, and the fallbacks for what it does not', () => {
    expect(read('q=ada&status=locked&page=3', USERS)).toEqual({ q: 'ada', status: 'locked', page: 3 });
    expect(read('', USERS)).toEqual({ q: '', status: '', page: 1 });
    expect(read('', {})).toEqual({ page: 1 });
    expect(read('', INVITATIONS)).toEqual({ status: 'pending', page: 1 });
  });

  it('reads an unknown choice as its fallback, and an empty one as "any"', () => {
    expect(read('status=gone', USERS).status).toBe('');
    expect(read('status=gone', INVITATIONS).status).toBe('pending');
    expect(read('status=', INVITATIONS).status).toBe('');
  });

  it('reads a page that is not plain digits naming a page from 1 up as the first page', () => {
    for (const page of ['0', '-2', '2.5', '1e3', '0x2', '+2', ' 2', 'two', '', '99999999999999999999']) {
      expect(read(`page=${encodeURIComponent(page)}`, {}).page, page).toBe(1);
    }
    expect(read('page=007', {}).page).toBe(7);
  });

  it('writes only what differs from the fallbacks, so the first page of an unfiltered list is bare', () => {
    expect(listSearch({ q: '', status: '', page: 1 }, USERS).toString()).toBe('');
    expect(listSearch({ q: 'ada lovelace', status: 'active', page: 2 }, USERS).toString()).toBe('q=ada+lovelace&status=active&page=2');
    expect(listSearch({ status: 'pending', page: 1 }, INVITATIONS).toString()).toBe('');
    expect(listSearch({ status: '', page: 4 }, INVITATIONS).toString()).toBe('status=&page=4');
  });

  it("keeps the address's parameters that are not the list's, and replaces the list's own", () => {
    const current = new URLSearchParams('welcome=1&q=old&page=3&tab=keys');
    expect(listSearch({ q: 'ada', status: '', page: 2 }, USERS, current).toString()).toBe('welcome=1&tab=keys&q=ada&page=2');
    expect(listSearch({ page: 1 }, {}, current).toString()).toBe('welcome=1&q=old&tab=keys');
  });

  it('reads back what it writes', () => {
    for (const values of [
      { status: '' as const, page: 4 },
      { status: 'accepted' as const, page: 1 },
      { status: 'pending' as const, page: 2 },
    ]) {
      expect(readListParams(listSearch(values, INVITATIONS), INVITATIONS)).toEqual(values);
    }
  });
});
