import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ErrorAlert } from '../feedback/ErrorAlert.tsx';
import { Loading } from '../feedback/Loading.tsx';

interface QueryStateProps<T> {
  query: UseQueryResult<T>;
  loading: string;
  /** Rendered instead of `children` when `isEmpty` says there is nothing to show. */
  empty?: ReactNode;
  isEmpty?(data: T): boolean;
  children(data: T): ReactNode;
}

/** Every list and detail shows the same three states before its data: loading, failed, empty. */
export function QueryState<T>({ query, loading, empty, isEmpty, children }: QueryStateProps<T>) {
  if (query.isPending) return <Loading label={loading} />;
  if (query.isError) return <ErrorAlert error={query.error} />;
  if (empty && isEmpty?.(query.data)) return <>{empty}</>;
  return <>{children(query.data)}</>;
}
