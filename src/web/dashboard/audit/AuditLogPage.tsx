import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { AuditFiltersForm } from './AuditFiltersForm.tsx';
import { AuditTable } from './AuditTable.tsx';
import { auditListInput, hasFilters, useAuditFilters } from './use-audit-filters.ts';

const PER_PAGE = 25;

/** The workspace's audit trail, newest first: filter, page through, open an event. Read-only for everyone. */
export function AuditLogPage() {
  const [filters, setFilters] = useAuditFilters();
  const input = auditListInput(filters, PER_PAGE);
  const events = useQuery({
    queryKey: ['audit.list', input],
    queryFn: () => api.audit.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(events.data, (page) => setFilters({ page }, { replace: true }));
  return (
    <>
      <PageHeader title="Audit log" description="Everything that happened in this workspace, newest first." />
      <AuditFiltersForm key={JSON.stringify(filters)} filters={filters} onChange={setFilters} />
      <QueryState
        query={events}
        loading="Loading audit events…"
        isEmpty={(p) => p.data.length === 0}
        empty={
          <EmptyState title={hasFilters(filters) ? 'No event matches these filters' : 'No events yet'}>
            {hasFilters(filters) ? 'Try other filters or a wider time range.' : null}
          </EmptyState>
        }
      >
        {(p) => (
          <>
            <AuditTable events={p.data} />
            <Pagination meta={p.meta} noun="events" onPage={(page) => setFilters({ page })} />
            {p.meta.total_capped ? (
              <p className="hint">More events match than can be paged through: narrow the filters or set an earlier “Until”.</p>
            ) : null}
          </>
        )}
      </QueryState>
    </>
  );
}
