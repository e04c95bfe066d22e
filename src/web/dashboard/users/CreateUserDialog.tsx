import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';

/** An account with a first password chosen by the administrator (to hand over out of band). */
export function CreateUserDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const create = useMutation({
    mutationFn: () => api.users.create.mutate({ email: email.trim(), password, ...(name.trim() ? { name: name.trim() } : {}) }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['users.list'] });
      close();
    },
  });
  function close() {
    setOpen(false);
    setEmail('');
    setName('');
    setPassword('');
    create.reset();
  }
  return (
    <>
      <Button onClick={() => setOpen(true)}>Create user</Button>
      <Dialog title="Create a user" open={open} onClose={close} description="They sign in with this password; they can change it later.">
        <Form label="Create a user" onSubmit={() => create.mutate()} submitLabel="Create user" busy={create.isPending} error={create.error}>
          <TextField label="Email" type="email" value={email} onChange={setEmail} required autoComplete="off" />
          <TextField label="Name" value={name} onChange={setName} hint="Optional." autoComplete="off" />
          <TextField
            label="First password"
            type="password"
            value={password}
            onChange={setPassword}
            required
            minLength={8}
            maxLength={128}
            autoComplete="new-password"
            hint="8 to 128 characters; very common passwords are refused."
          />
        </Form>
      </Dialog>
    </>
  );
}
