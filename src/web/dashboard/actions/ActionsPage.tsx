import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { ActionsTable } from './ActionsTable.tsx';
import { CreateActionDialog } from './CreateActionDialog.tsx';

/** Code that runs at sign-in: list, create, and open one to edit, deploy and test. */
export function ActionsPage() {
  const canWrite = useCan()('actions:write');
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const actions = useQuery({
    queryKey: ['actions.list', input],
    queryFn: () => api.actions.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(actions.data, (p) => setParams({ page: p }, { replace: true }));
  return (
    <>
      <PageHeader
        title="Actions"
        description="JavaScript that runs in a sandbox after each sign-in: add claims, require a second factor, or refuse."
        actions={canWrite ? <CreateActionDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="actions:write" />}
      <QueryState
        query={actions}
        loading="Loading actions…"
        isEmpty={(p) => p.data.length === 0}
        empty={<EmptyState title="No actions yet">{canWrite ? 'Create one, blank or from a template.' : null}</EmptyState>}
      >
        {(p) => (
          <>
            <ActionsTable actions={p.data} canWrite={canWrite} />
            <Pagination meta={p.meta} noun="actions" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
