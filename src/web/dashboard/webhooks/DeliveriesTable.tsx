import type { WebhookDelivery } from '../../api/types.ts';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { DeliveryAttempts } from './DeliveryAttempts.tsx';
import { RedeliverButton } from './RedeliverButton.tsx';

const TONE = { pending: 'warn', succeeded: 'good', failed: 'bad' } as const;

/** Deliveries newest first: state, attempts, the last response and when the next try is due. */
export function DeliveriesTable({ deliveries, canWrite }: { deliveries: WebhookDelivery[]; canWrite: boolean }) {
  return (
    <table className="table">
      <caption className="visually-hidden">Deliveries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Response</th>
          <th scope="col">Created</th>
          <th scope="col">Next attempt</th>
          <th scope="col">Last attempts</th>
          {canWrite ? (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id}>
            <th scope="row">
              <code>{d.event_type}</code>
            </th>
            <td>
              <StatusBadge status={d.status} tone={TONE[d.status]} />
            </td>
            <td>{d.attempts}</td>
            <td>{d.response_status ?? '—'}</td>
            <td>{formatDateTime(d.created_at)}</td>
            <td>{formatDateTime(d.next_attempt_at, '—')}</td>
            <td>
              <DeliveryAttempts attempts={d.last_attempts} />
            </td>
            {canWrite ? (
              <td className="actions-narrow">
                <RedeliverButton delivery={d} />
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
