import type { AuditEvent } from '../../api/types.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { AuditEventDialog } from './AuditEventDialog.tsx';

function actorText(event: AuditEvent): string {
  return event.actor.id ? `${event.actor.type} ${event.actor.id}` : event.actor.type;
}

/** Events newest first, one row each; the Details button opens the whole event. */
export function AuditTable({ events }: { events: AuditEvent[] }) {
  return (
    <DataTable
      caption="Audit events, newest first"
      rows={events}
      columns={[
        { header: 'When', cell: (e) => formatDateTime(e.created_at) },
        { header: 'Event', rowHeader: true, cell: (e) => <code>{e.event_type}</code> },
        { header: 'Outcome', cell: (e) => <StatusBadge status={e.outcome} tone={e.outcome === 'success' ? 'good' : 'bad'} /> },
        { header: 'Actor', className: 'wrap', cell: (e) => <code>{actorText(e)}</code> },
        { header: 'Target', className: 'wrap', cell: (e) => (e.target ? <code>{`${e.target.type} ${e.target.id}`}</code> : '—') },
      ]}
      actions={{ label: 'Details', className: 'actions-narrow', cell: (e) => <AuditEventDialog event={e} /> }}
    />
  );
}
