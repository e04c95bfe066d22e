import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { BLANK_ENDPOINT, EndpointFields, type EndpointDraft } from './EndpointFields.tsx';

/** Adds an endpoint; its `whsec_` signing secret is shown this once. */
export function CreateEndpointDialog() {
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<EndpointDraft>(BLANK_ENDPOINT);
  const create = useMutation({
    mutationFn: () =>
      api.webhooks.create.mutate({
        url: draft.url.trim(),
        ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
        event_types: draft.event_types,
        enabled: draft.enabled,
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['webhooks.list'] }),
  });
  return (
    <FormDialog
      opener="Add endpoint"
      title="Add a webhook endpoint"
      submitLabel="Add endpoint"
      mutation={create}
      onReset={() => setDraft(BLANK_ENDPOINT)}
      done={(endpoint) => (
        <>
          <Notice>
            Events now go to <code>{endpoint.url}</code>.
          </Notice>
          <SecretOnce label="Signing secret" value={endpoint.secret} />
          <p className="hint">Verify each delivery's signature with it. You won't see it again: store it before closing this dialog.</p>
        </>
      )}
    >
      <EndpointFields draft={draft} onChange={setDraft} />
    </FormDialog>
  );
}
