import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { WebhookEndpoint } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { ItemLink } from '../../ui/navigation/list-links.tsx';
import { EditEndpointDialog } from './EditEndpointDialog.tsx';
import { SendTestButton } from './SendTestButton.tsx';

/** Endpoints with their events and state; writers also get test, edit and delete. */
export function EndpointsTable({ endpoints, canWrite }: { endpoints: WebhookEndpoint[]; canWrite: boolean }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (id: string) => api.webhooks.delete.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['webhooks.list'] }),
  });
  return (
    <DataTable
      caption="Webhook endpoints"
      rows={endpoints}
      columns={[
        {
          header: 'URL',
          rowHeader: true,
          className: 'wrap',
          cell: (e) => (
            <>
              <code>{e.url}</code>
              {e.description ? <p>{e.description}</p> : null}
            </>
          ),
        },
        { header: 'Events', className: 'wrap', cell: (e) => (e.event_types.length > 0 ? e.event_types.join(', ') : 'All events') },
        { header: 'State', cell: (e) => <StatusBadge status={e.enabled ? 'enabled' : 'disabled'} tone={e.enabled ? 'good' : 'neutral'} /> },
      ]}
      actions={{
        cell: (e) => (
          <>
            <ItemLink
              className="button button-secondary button-small"
              to={`/dashboard/webhooks/${e.id}`}
              ariaLabel={`Deliveries of ${e.url}`}
            >
              Deliveries
            </ItemLink>
            {canWrite ? (
              <>
                <SendTestButton endpoint={e} />
                <EditEndpointDialog endpoint={e} />
                <ConfirmButton
                  label="Delete"
                  ariaLabel={`Delete ${e.url}`}
                  title="Delete this endpoint?"
                  onConfirm={() => remove.mutateAsync(e.id)}
                >
                  <code>{e.url}</code> receives no more events and its delivery history goes with it. This cannot be undone.
                </ConfirmButton>
              </>
            ) : null}
          </>
        ),
      }}
    />
  );
}
