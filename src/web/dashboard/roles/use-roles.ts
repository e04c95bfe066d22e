import { useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';

/** Every role of the workspace (built-in and custom), for lists and pickers. */
export function useAllRoles(enabled = true) {
  return useQuery({ queryKey: ['roles.list', { per_page: 100 }], queryFn: () => api.roles.list.query({ per_page: 100 }), enabled });
}
