import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Permission } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { PermissionPicker } from './PermissionPicker.tsx';

export function CreateRoleDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [key, setKey] = useState('');
  const [description, setDescription] = useState('');
  const [permissions, setPermissions] = useState<Permission[]>([]);
  const create = useMutation({
    mutationFn: () =>
      api.roles.create.mutate({
        name: name.trim(),
        permissions,
        ...(key.trim() ? { key: key.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
      }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['roles.list'] });
      close();
    },
  });
  function close() {
    setOpen(false);
    setName('');
    setKey('');
    setDescription('');
    setPermissions([]);
    create.reset();
  }
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Create role
      </Button>
      <Dialog title="Create a custom role" open={open} onClose={close}>
        <Form
          label="Create a custom role"
          onSubmit={() => create.mutate()}
          submitLabel="Create role"
          busy={create.isPending}
          error={create.error}
        >
          <TextField label="Name" value={name} onChange={setName} required maxLength={100} />
          <TextField
            label="Key"
            value={key}
            onChange={setKey}
            maxLength={50}
            pattern="[a-z][a-z0-9_\-]{1,49}"
            hint="Optional: lower-case letters, digits, - or _. Made from the name when empty."
          />
          <TextField label="Description" value={description} onChange={setDescription} maxLength={500} hint="Optional." />
          <PermissionPicker value={permissions} onChange={setPermissions} />
        </Form>
      </Dialog>
    </>
  );
}
