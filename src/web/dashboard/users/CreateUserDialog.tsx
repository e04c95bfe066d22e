import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { NewPasswordField } from '../../ui/forms/NewPasswordField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { refreshRoleHolders } from '../roles/refresh-role-holders.ts';

/** An account with a first password chosen by the administrator (to hand over out of band). */
export function CreateUserDialog() {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const create = useMutation({
    mutationFn: () => api.users.create.mutate({ email: email.trim(), password, ...(name.trim() ? { name: name.trim() } : {}) }),
    // A new user holds `member`: its count changes too.
    onSuccess: () => void refreshRoleHolders(queryClient),
  });
  const reset = () => {
    setEmail('');
    setName('');
    setPassword('');
  };
  return (
    <FormDialog
      opener="Create user"
      openerVariant="secondary"
      title="Create a user"
      description="They sign in with this password; they can change it later."
      submitLabel="Create user"
      mutation={create}
      onReset={reset}
    >
      <TextField label="Email" name="email" type="email" value={email} onChange={setEmail} required autoComplete="off" />
      <TextField label="Name" name="name" value={name} onChange={setName} hint="Optional." autoComplete="off" />
      <NewPasswordField label="First password" name="password" value={password} onChange={setPassword} />
    </FormDialog>
  );
}
