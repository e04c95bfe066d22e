import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { OrganizationDialog } from './OrganizationDialog.tsx';
import { PortalLinkButton } from './PortalLinkButton.tsx';
import { SsoConnectionButton } from './SsoConnectionButton.tsx';

/** Customer companies: their domains, their SSO, and the Admin Portal link for their IT admin. */
export function OrganizationsPage() {
  const can = useCan();
  const canWrite = can('organizations:write');
  const queryClient = useQueryClient();
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const organizations = useQuery({
    queryKey: ['organizations.list', input],
    queryFn: () => api.organizations.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(organizations.data, (p) => setParams({ page: p }, { replace: true }));
  const remove = useMutation({
    mutationFn: (id: string) => api.organizations.delete.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['organizations.list'] }),
  });

  return (
    <>
      <PageHeader
        title="Organizations"
        description="Companies whose people sign in through their own identity provider."
        actions={canWrite ? <OrganizationDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="organizations:write" />}
      <QueryState
        query={organizations}
        loading="Loading organizations…"
        isEmpty={(p) => p.data.length === 0}
        empty={
          <EmptyState title="No organizations yet">
            {canWrite ? 'Create one, then send its IT admin an Admin Portal link.' : null}
          </EmptyState>
        }
      >
        {(p) => (
          <>
            <DataTable
              caption="Organizations"
              rows={p.data}
              columns={[
                { header: 'Name', rowHeader: true, cell: (o) => o.name },
                { header: 'Domains', cell: (o) => o.domains.join(', ') || '—' },
                {
                  header: 'Single sign-on',
                  cell: (o) =>
                    o.connection ? (
                      <StatusBadge
                        status={`${o.connection.kind.toUpperCase()}${o.connection.active ? '' : ' (inactive)'}`}
                        tone={o.connection.active ? 'good' : 'warn'}
                      />
                    ) : (
                      <StatusBadge status="Not configured" />
                    ),
                },
                { header: 'Members', cell: (o) => o.member_count },
              ]}
              actions={{
                cell: (o) => (
                  <>
                    <SsoConnectionButton organization={o} />
                    {canWrite ? (
                      <>
                        <PortalLinkButton organization={o} />
                        <OrganizationDialog organization={o} />
                        <ConfirmButton
                          label="Delete"
                          ariaLabel={`Delete ${o.name}`}
                          title={`Delete ${o.name}?`}
                          onConfirm={() => remove.mutateAsync(o.id)}
                        >
                          Its domains, SSO connection and memberships are removed; its people keep their accounts.
                        </ConfirmButton>
                      </>
                    ) : null}
                  </>
                ),
              }}
            />
            <Pagination meta={p.meta} noun="organizations" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
