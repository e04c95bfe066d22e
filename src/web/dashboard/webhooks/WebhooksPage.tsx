import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateEndpointDialog } from './CreateEndpointDialog.tsx';
import { EndpointsTable } from './EndpointsTable.tsx';

/** Webhook endpoints: where the workspace's events are sent. */
export function WebhooksPage() {
  const canWrite = useCan()('webhooks:write');
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const endpoints = useQuery({
    queryKey: ['webhooks.list', input],
    queryFn: () => api.webhooks.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(endpoints.data, (p) => setParams({ page: p }, { replace: true }));
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Endpoints that receive this workspace's events as signed HTTP POSTs."
        actions={canWrite ? <CreateEndpointDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="webhooks:write" />}
      <QueryState
        query={endpoints}
        loading="Loading endpoints…"
        isEmpty={(p) => p.data.length === 0}
        empty={<EmptyState title="No endpoints yet">{canWrite ? 'Add one to receive events as they happen.' : null}</EmptyState>}
      >
        {(p) => (
          <>
            <EndpointsTable endpoints={p.data} canWrite={canWrite} />
            <Pagination meta={p.meta} noun="endpoints" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
