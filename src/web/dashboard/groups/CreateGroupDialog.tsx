import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';

export function CreateGroupDialog() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () => api.groups.create.mutate({ name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['groups.list'] }),
  });
  const reset = () => {
    setName('');
    setDescription('');
  };
  return (
    <FormDialog opener="Create group" title="Create a group" submitLabel="Create group" mutation={create} onReset={reset}>
      <TextField
        label="Name"
        name="name"
        value={name}
        onChange={setName}
        required
        maxLength={100}
        hint="Unique in the workspace, whatever the case."
      />
      <TextField label="Description" name="description" value={description} onChange={setDescription} maxLength={500} hint="Optional." />
    </FormDialog>
  );
}
