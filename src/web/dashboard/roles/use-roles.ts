import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { readAllPages } from '../../ui/data/all-pages.ts';

/** Every role of the workspace (built-in and custom), every page of them, for pickers and lookups by id. */
export function useAllRoles(enabled = true) {
  return useQuery({ queryKey: ['roles.list', 'all'], queryFn: () => readAllPages((page) => api.roles.list.query(page)), enabled });
}
