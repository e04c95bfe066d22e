import type { AuditEvent } from '../../api/types.ts';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { AuditEventDialog } from './AuditEventDialog.tsx';

function actorText(event: AuditEvent): string {
  return event.actor.id ? `${event.actor.type} ${event.actor.id}` : event.actor.type;
}

/** Events newest first, one row each; the Details button opens the whole event. */
export function AuditTable({ events }: { events: AuditEvent[] }) {
  return (
    <table className="table">
      <caption className="visually-hidden">Audit events, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Event</th>
          <th scope="col">Outcome</th>
          <th scope="col">Actor</th>
          <th scope="col">Target</th>
          <th scope="col">
            <span className="visually-hidden">Details</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.id}>
            <td>{formatDateTime(e.created_at)}</td>
            <th scope="row">
              <code>{e.event_type}</code>
            </th>
            <td>
              <StatusBadge status={e.outcome} tone={e.outcome === 'success' ? 'good' : 'bad'} />
            </td>
            <td className="wrap">
              <code>{actorText(e)}</code>
            </td>
            <td className="wrap">{e.target ? <code>{`${e.target.type} ${e.target.id}`}</code> : '—'}</td>
            <td className="actions-narrow">
              <AuditEventDialog event={e} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
