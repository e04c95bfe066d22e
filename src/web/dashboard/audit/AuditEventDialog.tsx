import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { AuditEvent } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { Dialog } from '../../ui/overlay/Dialog.tsx';

/** One event, read fresh from `audit.get`: who, what, from where, and its details as JSON. */
export function AuditEventDialog({ event }: { event: AuditEvent }) {
  const [open, setOpen] = useState(false);
  const detail = useQuery({
    queryKey: ['audit.get', event.id],
    queryFn: () => api.audit.get.query({ id: event.id }),
    enabled: open,
  });
  return (
    <>
      <Button
        className="button-small"
        aria-label={`Details of ${event.event_type} at ${formatDateTime(event.created_at)}`}
        onClick={() => setOpen(true)}
      >
        Details
      </Button>
      <Dialog title={`Event ${event.event_type}`} open={open} onClose={() => setOpen(false)}>
        <QueryState query={detail} loading="Loading the event…">
          {(e) => (
            <>
              <dl className="facts">
                <dt>Event ID</dt>
                <dd>
                  <code>{e.id}</code>
                </dd>
                <dt>When</dt>
                <dd>{formatDateTime(e.created_at)}</dd>
                <dt>Outcome</dt>
                <dd>{e.outcome}</dd>
                <dt>Actor</dt>
                <dd>
                  {e.actor.type} {e.actor.id ? <code>{e.actor.id}</code> : null}
                </dd>
                <dt>Target</dt>
                <dd>{e.target ? <code>{`${e.target.type} ${e.target.id}`}</code> : '—'}</dd>
                <dt>IP address</dt>
                <dd>{e.ip ?? '—'}</dd>
                <dt>User agent</dt>
                <dd>{e.user_agent ?? '—'}</dd>
                <dt>Request ID</dt>
                <dd>{e.request_id ? <code>{e.request_id}</code> : '—'}</dd>
              </dl>
              <h3>Details</h3>
              <pre className="code-block" aria-label="Event details">
                {JSON.stringify(e.details, null, 2)}
              </pre>
            </>
          )}
        </QueryState>
      </Dialog>
    </>
  );
}
