import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Permission } from '../../api/types.ts';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { PermissionPicker } from './PermissionPicker.tsx';

export function CreateRoleDialog() {
  const queryClient = useQueryClient();
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
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['roles.list'] }),
  });
  const reset = () => {
    setName('');
    setKey('');
    setDescription('');
    setPermissions([]);
  };
  return (
    <FormDialog opener="Create role" title="Create a custom role" submitLabel="Create role" mutation={create} onReset={reset}>
      <TextField label="Name" name="name" value={name} onChange={setName} required maxLength={100} />
      <TextField
        label="Key"
        name="key"
        value={key}
        onChange={setKey}
        maxLength={50}
        pattern="[a-z][a-z0-9_\-]{1,49}"
        hint="Optional: lower-case letters, digits, - or _. Made from the name when empty."
      />
      <TextField label="Description" name="description" value={description} onChange={setDescription} maxLength={500} hint="Optional." />
      <PermissionPicker value={permissions} onChange={setPermissions} />
    </FormDialog>
  );
}
