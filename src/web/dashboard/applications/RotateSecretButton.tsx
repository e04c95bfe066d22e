import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Application } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { DoneButton } from '../../ui/overlay/DoneButton.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';

/** Issues a new client secret after a warning; the old one stops working at once. */
export function RotateSecretButton({ application }: { application: Application }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const rotate = useMutation({
    mutationFn: () => api.applications.rotateSecret.mutate({ id: application.id }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['applications.list'] }),
  });
  const close = () => {
    setOpen(false);
    rotate.reset();
  };
  return (
    <>
      <Button className="button-small" aria-label={`Rotate the secret of ${application.name}`} onClick={() => setOpen(true)}>
        Rotate secret
      </Button>
      <Dialog title={`Rotate the secret of ${application.name}?`} open={open} onClose={close}>
        {rotate.data?.client_secret ? (
          <>
            <SecretOnce label="New client secret" value={rotate.data.client_secret} />
            <DoneButton onDone={close} />
          </>
        ) : (
          <>
            <p className="confirm-text">
              A new secret is issued and the current one (<code>{application.client_secret_prefix}…</code>) stops working at once: update
              the application right after.
            </p>
            <ErrorAlert error={rotate.error} />
            <div className="form-actions">
              <Button onClick={close}>Cancel</Button>
              <Button variant="danger" busy={rotate.isPending} onClick={() => rotate.mutate()}>
                Rotate secret
              </Button>
            </div>
          </>
        )}
      </Dialog>
    </>
  );
}
