import type { WebhookDelivery } from '../../api/types.ts';
import { formatDateTime } from '../../ui/data/format.ts';

/** A delivery's last attempts, folded away until asked for. */
export function DeliveryAttempts({ attempts }: { attempts: WebhookDelivery['last_attempts'] }) {
  if (attempts.length === 0) return <>Not tried yet</>;
  return (
    <details>
      <summary>
        {attempts.length} recent attempt{attempts.length === 1 ? '' : 's'}
      </summary>
      <ol className="attempts">
        {attempts.map((a, index) => (
          // Two attempts can share a timestamp (a redelivery in the same millisecond, a frozen test clock).
          <li key={`${index}:${a.attempted_at}`}>
            {formatDateTime(a.attempted_at)}: {a.response_status ?? 'no response'} in {a.duration_ms} ms
            {a.error ? <> · {a.error}</> : null}
          </li>
        ))}
      </ol>
    </details>
  );
}
