import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateRoleDialog } from './CreateRoleDialog.tsx';
import { refreshRoleHolders } from './refresh-role-holders.ts';

function describePermissions(permissions: string[]): string {
  if (permissions.includes('*')) return 'Everything';
  if (permissions.length === 0) return 'Their own account only';
  return permissions.join(', ');
}

/** Built-in and custom roles, a page at a time, with what they grant and how many hold them; custom ones can be made and deleted. */
export function RolesPage() {
  const can = useCan();
  const canWrite = can('roles:write');
  const queryClient = useQueryClient();
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const roles = useQuery({
    queryKey: ['roles.list', input],
    queryFn: () => api.roles.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(roles.data, (p) => setParams({ page: p }, { replace: true }));
  const ids = roles.data?.data.map((r) => r.id) ?? [];
  const counts = useQuery({
    queryKey: ['roles.list', 'counts', ids],
    queryFn: () => api.roles.memberCounts.query({ ids }),
    enabled: ids.length > 0,
  });
  const members = (id: string) => counts.data?.find((c) => c.role_id === id)?.members;
  const remove = useMutation({
    mutationFn: (id: string) => api.roles.delete.mutate({ id }),
    // Its holders lose it, and its pending invitations are revoked with it.
    onSuccess: () => Promise.all([refreshRoleHolders(queryClient), queryClient.invalidateQueries({ queryKey: ['invitations.list'] })]),
  });

  return (
    <>
      <PageHeader title="Roles" description="What each role lets its holders do." actions={canWrite ? <CreateRoleDialog /> : null} />
      {canWrite ? null : <ReadOnlyNote permission="roles:write" />}
      <QueryState query={roles} loading="Loading roles…">
        {(p) => (
          <>
            <DataTable
              caption="Roles"
              rows={p.data}
              columns={[
                {
                  header: 'Role',
                  rowHeader: true,
                  cell: (r) => (
                    <>
                      {r.name} {r.builtin ? <StatusBadge status="Built-in" /> : null}
                      {r.description ? <p className="muted">{r.description}</p> : null}
                    </>
                  ),
                },
                { header: 'Key', cell: (r) => <code>{r.key}</code> },
                { header: 'Permissions', className: 'wrap', cell: (r) => describePermissions(r.permissions) },
                { header: 'Members', cell: (r) => members(r.id) ?? '…' },
              ]}
              actions={
                canWrite
                  ? {
                      cell: (r) =>
                        r.builtin ? null : (
                          <ConfirmButton
                            label="Delete"
                            ariaLabel={`Delete the role ${r.name}`}
                            title={`Delete the role ${r.name}?`}
                            onConfirm={() => remove.mutateAsync(r.id)}
                          >
                            Everyone holding it loses what it grants, at once.
                          </ConfirmButton>
                        ),
                    }
                  : null
              }
            />
            <Pagination meta={p.meta} noun="roles" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
