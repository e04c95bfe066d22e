import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateApplicationDialog } from './CreateApplicationDialog.tsx';
import { RotateSecretButton } from './RotateSecretButton.tsx';

const TYPE_LABEL = { web: 'Web', spa: 'Single-page', native: 'Native', m2m: 'Machine to machine' } as const;

/** OAuth 2.0 / OpenID Connect clients of the workspace. */
export function ApplicationsPage() {
  const can = useCan();
  const canWrite = can('applications:write');
  const queryClient = useQueryClient();
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const applications = useQuery({
    queryKey: ['applications.list', input],
    queryFn: () => api.applications.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(applications.data, (p) => setParams({ page: p }, { replace: true }));
  const remove = useMutation({
    mutationFn: (id: string) => api.applications.delete.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['applications.list'] }),
  });

  return (
    <>
      <PageHeader
        title="Applications"
        description="Apps that sign people in through this workspace (OAuth 2.0 and OpenID Connect)."
        actions={canWrite ? <CreateApplicationDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="applications:write" />}
      <QueryState
        query={applications}
        loading="Loading applications…"
        isEmpty={(p) => p.data.length === 0}
        empty={
          <EmptyState title="No applications yet">{canWrite ? 'Register one to sign people in with OpenID Connect.' : null}</EmptyState>
        }
      >
        {(p) => (
          <>
            <DataTable
              caption="Applications"
              rows={p.data}
              columns={[
                { header: 'Name', rowHeader: true, cell: (a) => a.name },
                { header: 'Type', cell: (a) => TYPE_LABEL[a.type] },
                { header: 'Client ID', cell: (a) => <code>{a.client_id}</code> },
                { header: 'Redirect URIs', className: 'wrap', cell: (a) => a.redirect_uris.join(' ') || '—' },
                {
                  header: 'Secret',
                  cell: (a) =>
                    a.client_secret_prefix ? (
                      <>
                        <code>{a.client_secret_prefix}…</code>
                        <br />
                        <small>
                          {a.secret_rotated_at ? `rotated ${formatDateTime(a.secret_rotated_at)}` : `since ${formatDateTime(a.created_at)}`}
                        </small>
                      </>
                    ) : (
                      'None (public)'
                    ),
                },
              ]}
              actions={
                canWrite
                  ? {
                      cell: (a) => (
                        <>
                          {a.client_secret_prefix ? <RotateSecretButton application={a} /> : null}
                          <ConfirmButton
                            label="Delete"
                            ariaLabel={`Delete ${a.name}`}
                            title={`Delete ${a.name}?`}
                            onConfirm={() => remove.mutateAsync(a.id)}
                          >
                            Its codes, tokens and grants stop working at once. This cannot be undone.
                          </ConfirmButton>
                        </>
                      ),
                    }
                  : null
              }
            />
            <Pagination meta={p.meta} noun="applications" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
