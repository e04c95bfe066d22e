import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { InviteDialog } from '../invitations/InviteDialog.tsx';
import { CreateUserDialog } from './CreateUserDialog.tsx';
import { UserFiltersForm } from './UserFiltersForm.tsx';
import { UsersTable } from './UsersTable.tsx';
import { useUserFilters } from './use-user-filters.ts';

const PER_PAGE = 20;

/** Users: search, filter by status, page through; create, invite, deactivate, roles and groups. */
export function UsersPage() {
  const can = useCan();
  const canWrite = can('users:write');
  const [filters, setFilters] = useUserFilters();
  const input = {
    page: filters.page,
    per_page: PER_PAGE,
    ...(filters.q ? { q: filters.q } : {}),
    ...(filters.status ? { status: filters.status } : {}),
  };
  const users = useQuery({
    queryKey: ['users.list', input],
    queryFn: () => api.users.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(users.data, (p) => setFilters({ page: p }, { replace: true }));
  const ids = users.data?.data.map((u) => u.id) ?? [];
  const relations = useQuery({
    queryKey: ['users.list', 'relations', ids],
    queryFn: () => api.users.relations.query({ ids }),
    enabled: ids.length > 0,
  });
  const byUser = new Map((relations.data ?? []).map((r) => [r.user_id, r]));
  // A user's groups are group data: shown to those who may read groups (groups:read), not to every reader of users.
  const canReadGroups = can('groups:read');
  const memberships = useQuery({
    queryKey: ['users.list', 'groups', ids],
    queryFn: () => api.groups.ofUsers.query({ ids }),
    enabled: ids.length > 0 && canReadGroups,
  });
  const groupsByUser = canReadGroups ? new Map((memberships.data ?? []).map((m) => [m.user_id, m.groups])) : null;

  return (
    <>
      <PageHeader
        title="Users"
        description="Everyone who can sign in to this workspace."
        actions={
          canWrite ? (
            <>
              <CreateUserDialog />
              <InviteDialog />
            </>
          ) : null
        }
      />
      {canWrite ? null : <ReadOnlyNote permission="users:write" />}
      <UserFiltersForm key={filters.q} filters={filters} onChange={setFilters} />
      <QueryState
        query={users}
        loading="Loading users…"
        isEmpty={(page) => page.data.length === 0}
        empty={
          <EmptyState title={filters.q || filters.status ? 'No user matches this search' : 'No users yet'}>
            {filters.q || filters.status
              ? 'Try another search or status.'
              : canWrite
                ? 'Create a user or invite someone to get started.'
                : null}
          </EmptyState>
        }
      >
        {(page) => (
          <>
            <UsersTable users={page.data} relations={byUser} groups={groupsByUser} canWrite={canWrite} />
            <Pagination meta={page.meta} noun="users" onPage={(p) => setFilters({ page: p })} />
          </>
        )}
      </QueryState>
    </>
  );
}
