import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
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
  const [page, setPage] = useState(1);
  const input = { page, per_page: 20 };
  const organizations = useQuery({
    queryKey: ['organizations.list', input],
    queryFn: () => api.organizations.list.query(input),
    placeholderData: keepPreviousData,
  });
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
            <table className="table">
              <caption className="visually-hidden">Organizations</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Domains</th>
                  <th scope="col">Single sign-on</th>
                  <th scope="col">Members</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {p.data.map((o) => (
                  <tr key={o.id}>
                    <th scope="row">{o.name}</th>
                    <td>{o.domains.join(', ') || '—'}</td>
                    <td>
                      {o.connection ? (
                        <StatusBadge
                          status={`${o.connection.kind.toUpperCase()}${o.connection.active ? '' : ' (inactive)'}`}
                          tone={o.connection.active ? 'good' : 'warn'}
                        />
                      ) : (
                        <StatusBadge status="Not configured" />
                      )}
                    </td>
                    <td>{o.member_count}</td>
                    <td className="actions">
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
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Pagination meta={p.meta} noun="organizations" onPage={setPage} />
          </>
        )}
      </QueryState>
    </>
  );
}
