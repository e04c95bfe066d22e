import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { WebhookEndpoint } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';

/** Queues a `webhook.test` delivery to the endpoint; it shows up in its deliveries. */
export function SendTestButton({ endpoint }: { endpoint: WebhookEndpoint }) {
  const queryClient = useQueryClient();
  const send = useMutation({
    mutationFn: () => api.webhooks.test.mutate({ id: endpoint.id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['webhooks.deliveries', endpoint.id] }),
  });
  return (
    <>
      <Button
        className="button-small"
        aria-label={`Send a test event to ${endpoint.url}`}
        busy={send.isPending}
        onClick={() => send.mutate()}
      >
        Send test event
      </Button>
      <span className="copy-status" role="status">
        {send.isSuccess ? 'Test event queued' : ''}
      </span>
      <ErrorAlert error={send.error} />
    </>
  );
}
