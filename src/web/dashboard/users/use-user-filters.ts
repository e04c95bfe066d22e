import { useSearchParams } from 'react-router';
import type { UserStatus } from '../../api/types.ts';

export const USER_STATUSES = ['active', 'deactivated', 'locked'] as const satisfies readonly UserStatus[];

export interface UserFilters {
  q: string;
  status: UserStatus | '';
  page: number;
}

/** The list's search, status filter and page live in the address, so back, reload and links keep them. */
export function useUserFilters(): [UserFilters, (next: Partial<UserFilters>, options?: { replace?: boolean }) => void] {
  const [search, setSearch] = useSearchParams();
  const status = search.get('status');
  const filters: UserFilters = {
    q: search.get('q') ?? '',
    status: USER_STATUSES.find((s) => s === status) ?? '',
    page: Math.max(1, Number(search.get('page')) || 1),
  };
  const update = (next: Partial<UserFilters>, options?: { replace?: boolean }) => {
    const merged = { ...filters, page: 1, ...next };
    const params = new URLSearchParams();
    if (merged.q) params.set('q', merged.q);
    if (merged.status) params.set('status', merged.status);
    if (merged.page > 1) params.set('page', String(merged.page));
    setSearch(params, { replace: options?.replace ?? false });
  };
  return [filters, update];
}
