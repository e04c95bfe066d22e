import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { WebhookEndpoint } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { EndpointFields, type EndpointDraft } from './EndpointFields.tsx';

function draftOf(endpoint: WebhookEndpoint): EndpointDraft {
  return { url: endpoint.url, description: endpoint.description ?? '', event_types: endpoint.event_types, enabled: endpoint.enabled };
}

/** Changes an endpoint's URL, description, events or whether it is enabled; the secret stays. */
export function EditEndpointDialog({ endpoint }: { endpoint: WebhookEndpoint }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState<EndpointDraft>(() => draftOf(endpoint));
  const update = useMutation({
    mutationFn: () =>
      api.webhooks.update.mutate({
        id: endpoint.id,
        url: draft.url.trim(),
        description: draft.description.trim() || null,
        event_types: draft.event_types,
        enabled: draft.enabled,
      }),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ['webhooks.list'] });
      setOpen(false);
    },
  });
  const start = () => {
    setDraft(draftOf(endpoint));
    update.reset();
    setOpen(true);
  };
  return (
    <>
      <Button className="button-small" aria-label={`Edit ${endpoint.url}`} onClick={start}>
        Edit
      </Button>
      <Dialog title="Edit the webhook endpoint" open={open} onClose={() => setOpen(false)}>
        <Form
          label="Edit the webhook endpoint"
          onSubmit={() => update.mutate()}
          submitLabel="Save"
          busy={update.isPending}
          error={update.error}
          secondary={<Button onClick={() => setOpen(false)}>Cancel</Button>}
        >
          <EndpointFields draft={draft} onChange={setDraft} />
        </Form>
      </Dialog>
    </>
  );
}
