import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { WebhookDelivery } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';

/** Sends a delivery again, with the same webhook-id (receivers deduplicate on it). */
export function RedeliverButton({ delivery }: { delivery: WebhookDelivery }) {
  const queryClient = useQueryClient();
  const redeliver = useMutation({
    mutationFn: () => api.webhooks.redeliver.mutate({ id: delivery.id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['webhooks.deliveries', delivery.endpoint_id] }),
  });
  return (
    <>
      <Button
        className="button-small"
        aria-label={`Redeliver ${delivery.event_type} ${delivery.id}`}
        busy={redeliver.isPending}
        onClick={() => redeliver.mutate()}
      >
        Redeliver
      </Button>
      <ErrorAlert error={redeliver.error} />
    </>
  );
}
