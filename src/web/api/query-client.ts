import { QueryClient } from '@tanstack/react-query';
import { codeOf } from './errors.ts';

/** Answers from the API are definite: only a call that never reached it is tried again. */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failures, error) => failures < 2 && codeOf(error) === 'NETWORK',
        refetchOnWindowFocus: false,
        staleTime: 10_000,
      },
      mutations: { retry: false },
    },
  });
}
