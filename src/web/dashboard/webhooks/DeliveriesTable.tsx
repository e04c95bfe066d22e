import type { WebhookDelivery } from '../../api/types.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { DeliveryAttempts } from './DeliveryAttempts.tsx';
import { RedeliverButton } from './RedeliverButton.tsx';

const TONE = { pending: 'warn', succeeded: 'good', failed: 'bad' } as const;

/** Deliveries newest first: state, attempts, the last response and when the next try is due. */
export function DeliveriesTable({ deliveries, canWrite }: { deliveries: WebhookDelivery[]; canWrite: boolean }) {
  return (
    <DataTable
      caption="Deliveries, newest first"
      rows={deliveries}
      columns={[
        { header: 'Event', rowHeader: true, cell: (d) => <code>{d.event_type}</code> },
        { header: 'Status', cell: (d) => <StatusBadge status={d.status} tone={TONE[d.status]} /> },
        { header: 'Attempts', cell: (d) => d.attempts },
        { header: 'Response', cell: (d) => d.response_status ?? '—' },
        { header: 'Created', cell: (d) => formatDateTime(d.created_at) },
        { header: 'Next attempt', cell: (d) => formatDateTime(d.next_attempt_at, '—') },
        { header: 'Last attempts', cell: (d) => <DeliveryAttempts attempts={d.last_attempts} /> },
      ]}
      actions={canWrite ? { className: 'actions-narrow', cell: (d) => <RedeliverButton delivery={d} /> } : null}
    />
  );
}
