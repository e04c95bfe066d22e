import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';

/** A new secret API key (admin rights over the workspace), shown this once. */
export function CreateApiKeyDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api.apiKeys.create.mutate({ name: name.trim() }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apiKeys.list'] }),
  });
  const close = () => {
    setOpen(false);
    setName('');
    create.reset();
  };
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Create API key
      </Button>
      <Dialog
        title="Create a secret API key"
        open={open}
        onClose={close}
        description="A secret API key acts as an administrator of this workspace. Keep it on servers only."
      >
        {create.data ? (
          <>
            <SecretOnce label={`API key “${create.data.name}”`} value={create.data.key} />
            <div className="form-actions">
              <Button variant="primary" onClick={close}>
                Done
              </Button>
            </div>
          </>
        ) : (
          <Form
            label="Create a secret API key"
            onSubmit={() => create.mutate()}
            submitLabel="Create key"
            busy={create.isPending}
            error={create.error}
          >
            <TextField
              label="Name"
              value={name}
              onChange={setName}
              required
              maxLength={200}
              hint="Where it is used, for example “Billing backend”."
            />
          </Form>
        )}
      </Dialog>
    </>
  );
}
