import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { BackToList } from '../../ui/navigation/list-links.tsx';
import { DeliveriesTable } from './DeliveriesTable.tsx';
import { SendTestButton } from './SendTestButton.tsx';

/** While a delivery is pending the list is read again every few seconds, so its outcome shows up. */
const PENDING_REFRESH_MS = 2_000;

/** One endpoint's deliveries, newest first, with redeliver. */
export function DeliveriesPage() {
  const { id = '' } = useParams();
  const canWrite = useCan()('webhooks:write');
  const [{ page }, setParams] = useListParams({});
  const endpoint = useQuery({ queryKey: ['webhooks.get', id], queryFn: () => api.webhooks.get.query({ id }) }).data;
  const input = { id, page, per_page: 20 };
  const deliveries = useQuery({
    queryKey: ['webhooks.deliveries', id, input],
    queryFn: () => api.webhooks.deliveries.query(input),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.data.some((d) => d.status === 'pending') ? PENDING_REFRESH_MS : false),
  });
  usePageInRange(deliveries.data, (p) => setParams({ page: p }, { replace: true }));
  return (
    <>
      <PageHeader
        title="Deliveries"
        description={endpoint ? <code>{endpoint.url}</code> : null}
        actions={canWrite && endpoint ? <SendTestButton endpoint={endpoint} /> : null}
      />
      <BackToList listPath="/dashboard/webhooks">Back to webhooks</BackToList>
      <QueryState
        query={deliveries}
        loading="Loading deliveries…"
        isEmpty={(p) => p.data.length === 0}
        empty={<EmptyState title="No deliveries yet">Events this endpoint subscribes to show up here as they are sent.</EmptyState>}
      >
        {(p) => (
          <>
            <DeliveriesTable deliveries={p.data} canWrite={canWrite} />
            <Pagination meta={p.meta} noun="deliveries" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
