import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateApiKeyDialog } from './CreateApiKeyDialog.tsx';

/** The workspace's API keys, a page at a time: create one, revoke one. */
export function ApiKeysPage() {
  const can = useCan();
  const canWrite = can('api_keys:write');
  const queryClient = useQueryClient();
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const keys = useQuery({
    queryKey: ['apiKeys.list', input],
    queryFn: () => api.apiKeys.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(keys.data, (p) => setParams({ page: p }, { replace: true }));
  const revoke = useMutation({
    mutationFn: (id: string) => api.apiKeys.revoke.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['apiKeys.list'] }),
  });
  return (
    <>
      <PageHeader
        title="API keys"
        description="Secret keys your backends use to manage this workspace."
        actions={canWrite ? <CreateApiKeyDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="api_keys:write" />}
      <QueryState
        query={keys}
        loading="Loading API keys…"
        isEmpty={(page) => page.data.length === 0}
        empty={<EmptyState title="No API keys" />}
      >
        {(p) => (
          <>
            <DataTable
              caption="API keys"
              rows={p.data}
              columns={[
                { header: 'Name', rowHeader: true, cell: (k) => k.name },
                { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
                { header: 'Created', cell: (k) => formatDateTime(k.created_at) },
              ]}
              actions={
                canWrite
                  ? {
                      cell: (k) => (
                        <ConfirmButton
                          label="Revoke"
                          ariaLabel={`Revoke ${k.name}`}
                          title={`Revoke ${k.name}?`}
                          onConfirm={() => revoke.mutateAsync(k.id)}
                        >
                          Backends using it are refused from now on.
                        </ConfirmButton>
                      ),
                    }
                  : null
              }
            />
            <Pagination meta={p.meta} noun="API keys" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
