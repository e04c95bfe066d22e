import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { InvitationStatus } from '../../api/types.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { oneOf, useListParams } from '../../ui/data/use-list-params.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';
import { ReadOnlyNote } from '../../ui/layout/ReadOnlyNote.tsx';
import { useAllRoles } from '../roles/use-roles.ts';
import { InvitationActions } from './InvitationActions.tsx';
import { InviteDialog } from './InviteDialog.tsx';

const STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const satisfies readonly InvitationStatus[];
const OPTIONS = [{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: s }))] as const;
/** Pending ones unless the address names another status, or any (`?status=`). */
const INVITATION_LIST = { status: oneOf(STATUSES, 'pending') };
const TONE = { pending: 'warn', accepted: 'good', revoked: 'bad', expired: 'neutral' } as const;

export function InvitationsPage() {
  const can = useCan();
  const canWrite = can('users:write');
  const [{ status, page }, setParams] = useListParams(INVITATION_LIST);
  const input = { page, per_page: 20, ...(status ? { status } : {}) };
  const invitations = useQuery({
    queryKey: ['invitations.list', input],
    queryFn: () => api.invitations.list.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(invitations.data, (p) => setParams({ page: p }, { replace: true }));
  const roles = useAllRoles(can('roles:read'));
  const roleName = (id: string | null) => (id === null ? 'Deleted role' : (roles.data?.data.find((r) => r.id === id)?.name ?? id));

  return (
    <>
      <PageHeader
        title="Invitations"
        description="People invited by email who have not all joined yet."
        actions={canWrite ? <InviteDialog /> : null}
      />
      {canWrite ? null : <ReadOnlyNote permission="users:write" />}
      <div className="filters">
        <SelectField label="Status" value={status} options={OPTIONS} onChange={(s) => setParams({ status: s })} />
      </div>
      <QueryState
        query={invitations}
        loading="Loading invitations…"
        isEmpty={(p) => p.data.length === 0}
        empty={<EmptyState title={status ? `No ${status} invitations` : 'No invitations yet'} />}
      >
        {(p) => (
          <>
            <DataTable
              caption="Invitations"
              rows={p.data}
              columns={[
                { header: 'Email', rowHeader: true, cell: (i) => i.email },
                { header: 'Role', cell: (i) => roleName(i.role_id) },
                { header: 'Status', cell: (i) => <StatusBadge status={i.status} tone={TONE[i.status]} /> },
                { header: 'Last sent', cell: (i) => formatDateTime(i.last_sent_at) },
                { header: 'Expires', cell: (i) => formatDateTime(i.expires_at) },
              ]}
              actions={canWrite ? { cell: (i) => <InvitationActions invitation={i} /> } : null}
            />
            <Pagination meta={p.meta} noun="invitations" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </>
  );
}
