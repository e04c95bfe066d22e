import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';

export function CreateGroupDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation({
    mutationFn: () => api.groups.create.mutate({ name: name.trim(), ...(description.trim() ? { description: description.trim() } : {}) }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ['groups.list'] });
      close();
    },
  });
  function close() {
    setOpen(false);
    setName('');
    setDescription('');
    create.reset();
  }
  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Create group
      </Button>
      <Dialog title="Create a group" open={open} onClose={close}>
        <Form
          label="Create a group"
          onSubmit={() => create.mutate()}
          submitLabel="Create group"
          busy={create.isPending}
          error={create.error}
        >
          <TextField
            label="Name"
            value={name}
            onChange={setName}
            required
            maxLength={100}
            hint="Unique in the workspace, whatever the case."
          />
          <TextField label="Description" value={description} onChange={setDescription} maxLength={500} hint="Optional." />
        </Form>
      </Dialog>
    </>
  );
}
