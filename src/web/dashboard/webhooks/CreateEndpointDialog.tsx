import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';
import { BLANK_ENDPOINT, EndpointFields, type EndpointDraft } from './EndpointFields.tsx';

/** Adds an endpoint; its `whsec_` signing secret is shown this once. */
export function CreateEndpointDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
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
  const close = () => {
    setOpen(false);
    setDraft(BLANK_ENDPOINT);
    create.reset();
  };
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Add endpoint
      </Button>
      <Dialog title="Add a webhook endpoint" open={open} onClose={close}>
        {create.data ? (
          <>
            <Notice>
              Events now go to <code>{create.data.url}</code>.
            </Notice>
            <SecretOnce label="Signing secret" value={create.data.secret} />
            <p className="hint">Verify each delivery's signature with it. You won't see it again: store it before closing this dialog.</p>
            <div className="form-actions">
              <Button variant="primary" onClick={close}>
                Done
              </Button>
            </div>
          </>
        ) : (
          <Form
            label="Add a webhook endpoint"
            onSubmit={() => create.mutate()}
            submitLabel="Add endpoint"
            busy={create.isPending}
            error={create.error}
          >
            <EndpointFields draft={draft} onChange={setDraft} />
          </Form>
        )}
      </Dialog>
    </>
  );
}
