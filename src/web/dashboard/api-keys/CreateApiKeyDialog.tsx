import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';

/** A new secret API key (admin rights over the workspace), shown this once. */
export function CreateApiKeyDialog() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const create = useMutation({
    mutationFn: () => api.apiKeys.create.mutate({ name: name.trim() }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['apiKeys.list'] }),
  });
  return (
    <FormDialog
      opener="Create API key"
      title="Create a secret API key"
      description="A secret API key acts as an administrator of this workspace. Keep it on servers only."
      submitLabel="Create key"
      mutation={create}
      onReset={() => setName('')}
      done={(created) => <SecretOnce label={`API key “${created.name}”`} value={created.key} />}
    >
      <TextField
        label="Name"
        name="name"
        value={name}
        onChange={setName}
        required
        maxLength={200}
        hint="Where it is used, for example “Billing backend”."
      />
    </FormDialog>
  );
}
