import type { UserStatus } from '../../api/types.ts';
import { oneOf, text, useListParams, type ListParams, type SetListParams } from '../../ui/data/use-list-params.ts';

export const USER_STATUSES = ['active', 'deactivated', 'locked'] as const satisfies readonly UserStatus[];

const USER_LIST = { q: text(), status: oneOf(USER_STATUSES) };

export type UserFilters = ListParams<typeof USER_LIST>;

/** The list's search, status filter and page live in the address, so back, reload and links keep them. */
export function useUserFilters(): [UserFilters, SetListParams<typeof USER_LIST>] {
  return useListParams(USER_LIST);
}
