import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { ApplicationType } from '../../api/types.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextArea } from '../../ui/forms/TextArea.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';

const TYPES = [
  { value: 'web', label: 'Web application (server-side, with a client secret)' },
  { value: 'spa', label: 'Single-page application (public, PKCE)' },
  { value: 'native', label: 'Native or mobile application (public, PKCE)' },
  { value: 'm2m', label: 'Machine to machine (client credentials)' },
] as const satisfies readonly { value: ApplicationType; label: string }[];

/** Registers an application; a confidential one's secret is shown this once. */
export function CreateApplicationDialog() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [type, setType] = useState<ApplicationType>('web');
  const [redirectUris, setRedirectUris] = useState('');
  const create = useMutation({
    mutationFn: () =>
      api.applications.create.mutate({
        name: name.trim(),
        type,
        redirect_uris: type === 'm2m' ? [] : redirectUris.split(/\s+/).filter(Boolean),
      }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['applications.list'] }),
  });
  const reset = () => {
    setName('');
    setType('web');
    setRedirectUris('');
  };
  return (
    <FormDialog
      opener="Register application"
      title="Register an application"
      submitLabel="Register"
      mutation={create}
      onReset={reset}
      done={(app) => (
        <>
          <Notice>
            {app.name} is registered. Its client ID is <code>{app.client_id}</code>.
          </Notice>
          {app.client_secret ? <SecretOnce label="Client secret" value={app.client_secret} /> : null}
        </>
      )}
    >
      <TextField
        label="Name"
        name="name"
        value={name}
        onChange={setName}
        required
        maxLength={200}
        hint="People see it on the sign-in page."
      />
      <SelectField<ApplicationType> label="Type" name="type" value={type} options={TYPES} onChange={setType} />
      {type === 'm2m' ? null : (
        <TextArea
          label="Redirect URIs"
          name="redirect_uris"
          value={redirectUris}
          onChange={setRedirectUris}
          rows={3}
          hint="One per line; matched exactly. https, or http on localhost."
        />
      )}
    </FormDialog>
  );
}
