import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Button } from '../../ui/actions/Button.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { CreateGroupDialog } from './CreateGroupDialog.tsx';

/** Groups of people; members are added and removed from a user's "Roles & groups" on the Users screen. */
export function GroupsPage() {
  const can = useCan();
  const canWrite = can('groups:write');
  const queryClient = useQueryClient();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const [page, setPage] = useState(1);
  const input = { page, per_page: 20, ...(q ? { q } : {}) };
  const groups = useQuery({
    queryKey: ['groups.list', input],
    queryFn: () => api.groups.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(groups.data, setPage);
  const remove = useMutation({
    mutationFn: (id: string) => api.groups.delete.mutate({ id }),
    // Its members leave it: the Groups column of the users list changes too.
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: ['groups.list'] }),
        queryClient.invalidateQueries({ queryKey: ['users.list'] }),
      ]),
  });
  const search = (event: FormEvent) => {
    event.preventDefault();
    setQ(typed.trim());
    setPage(1);
  };

  return (
    <>
      <PageHeader
        title="Groups"
        description="Members are added from a user’s “Roles & groups” on the Users screen."
        actions={canWrite ? <CreateGroupDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="groups:write" />}
      <form className="filters" role="search" aria-label="Search groups" onSubmit={search}>
        <TextField label="Search" type="search" value={typed} onChange={setTyped} placeholder="Group name" />
        <Button type="submit">Search</Button>
      </form>
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
            <Pagination meta={p.meta} noun="groups" onPage={setPage} />
          </>
        )}
      </QueryState>
    </>
  );
}
