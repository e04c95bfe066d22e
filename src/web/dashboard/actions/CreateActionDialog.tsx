import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { ActionTemplate } from '../../api/types.ts';
import { readAllPages } from '../../ui/data/all-pages.ts';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { useOpenFromList } from '../../ui/navigation/list-links.tsx';
import { BLANK_ACTION_CODE } from './blank-action.ts';

type Start = ActionTemplate['key'] | 'blank';

/** Creates a draft action, blank or from a built-in template, and opens it in the editor. */
export function CreateActionDialog() {
  const queryClient = useQueryClient();
  const openAction = useOpenFromList();
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [start, setStart] = useState<Start>('blank');
  const templates = useQuery({
    queryKey: ['actions.templates', 'all'],
    queryFn: () => readAllPages((page) => api.actions.templates.query(page)),
    staleTime: Infinity,
    enabled: open,
  });
  const chosen = templates.data?.data.find((t) => t.key === start);
  const create = useMutation({
    mutationFn: () =>
      start === 'blank'
        ? api.actions.create.mutate({ name: name.trim(), code: BLANK_ACTION_CODE })
        : api.actions.create.mutate({ template: start, ...(name.trim() ? { name: name.trim() } : {}) }),
    onSuccess: async (action) => {
      await queryClient.invalidateQueries({ queryKey: ['actions.list'] });
      openAction(`/dashboard/actions/${action.id}`);
    },
  });
  const options = [
    { value: 'blank' as Start, label: 'Blank action' },
    ...(templates.data?.data ?? []).map((t) => ({ value: t.key as Start, label: `Template: ${t.name}` })),
  ];
  const reset = () => {
    setName('');
    setStart('blank');
  };
  return (
    <FormDialog
      opener="Create action"
      title="Create an action"
      submitLabel="Create action"
      mutation={create}
      onReset={reset}
      onOpenChange={setOpen}
    >
      <SelectField<Start> label="Start from" name="template" value={start} options={options} onChange={setStart} />
      {chosen ? <p className="hint">{chosen.description}</p> : null}
      <TextField
        label="Name"
        name="name"
        value={name}
        onChange={setName}
        required={start === 'blank'}
        maxLength={200}
        hint={start === 'blank' ? undefined : "Leave it empty to use the template's name."}
      />
    </FormDialog>
  );
}
