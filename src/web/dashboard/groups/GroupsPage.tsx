import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Button } from '../../ui/actions/Button.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { text, useListParams } from '../../ui/data/use-list-params.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateGroupDialog } from './CreateGroupDialog.tsx';

const GROUP_LIST = { q: text() };

/** Search by name; the typed text starts from the search in the address (`key` it by that search). */
function GroupSearchForm({ q, onSearch }: { q: string; onSearch(q: string): void }) {
  const [typed, setTyped] = useState(q);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSearch(typed.trim());
  };
  return (
    <form className="filters" role="search" aria-label="Search groups" onSubmit={submit}>
      <TextField label="Search" type="search" value={typed} onChange={setTyped} placeholder="Group name" />
      <Button type="submit">Search</Button>
    </form>
  );
}

/** Groups of people; members are added and removed from a user's "Roles & groups" on the Users screen. */
export function GroupsPage() {
  const can = useCan();
  const canWrite = can('groups:write');
  const queryClient = useQueryClient();
  const [{ q, page }, setParams] = useListParams(GROUP_LIST);
  const input = { page, per_page: 20, ...(q ? { q } : {}) };
  const groups = useQuery({
    queryKey: ['groups.list', input],
    queryFn: () => api.groups.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(groups.data, (p) => setParams({ page: p }, { replace: true }));
  const remove = useMutation({
    mutationFn: (id: string) => api.groups.delete.mutate({ id }),
    // Its members leave it: the Groups column of the users list changes too.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ['groups.list'] }),
        queryClient.invalidateQueries({ queryKey: ['users.list'] }),
      ]),
  });
  return (
    <>
      <PageHeader
        title="Groups"
        description="Members are added from a user’s “Roles & groups” on the Users screen."
        actions={canWrite ? <CreateGroupDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="groups:write" />}
      <GroupSearchForm key={q} q={q} onSearch={(next) => setParams({ q: next })} />
      <QueryState
        query={groups}
        loading="Loading groups…"
        isEmpty={(p) => p.data.length === 0}
        empty={
          <EmptyState title={q ? 'No group matches this search' : 'No groups yet'}>
            {canWrite && !q ? 'Create one to organise people.' : null}
          </EmptyState>
        }
      >
        {(p) => (
          <>
            <DataTable
              caption="Groups"
              rows={p.data}
              columns={[
                { header: 'Name', rowHeader: true, cell: (g) => g.name },
                { header: 'Description', cell: (g) => g.description ?? '—' },
                { header: 'Members', cell: (g) => g.member_count },
                { header: 'Created', cell: (g) => formatDateTime(g.created_at) },
              ]}
              actions={
                canWrite
                  ? {
                      cell: (g) => (
                        <ConfirmButton
                          label="Delete"
                          ariaLabel={`Delete the group ${g.name}`}
                          title={`Delete the group ${g.name}?`}
                          onConfirm={() => remove.mutateAsync(g.id)}
                        >
                          Its {g.member_count} members stay; only the group goes.
                        </ConfirmButton>
                      ),
                    }
                  : null
              }
            />
            <Pagination meta={p.meta} noun="groups" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
