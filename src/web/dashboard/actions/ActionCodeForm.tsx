import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Action } from '../../api/types.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextArea } from '../../ui/forms/TextArea.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

/** The action's name and code; saving makes a draft (the deployed version keeps running until the next deploy). */
export function ActionCodeForm({ action }: { action: Action }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(action.name);
  const [code, setCode] = useState(action.code);
  const save = useMutation({
    mutationFn: () => api.actions.update.mutate({ id: action.id, name: name.trim(), code }),
    onSuccess: async (saved) => {
      queryClient.setQueryData(['actions.get', action.id], saved);
      await queryClient.invalidateQueries({ queryKey: ['actions.list'] });
    },
  });
  const edited = name !== action.name || code !== action.code;
  return (
    <Form label="Code of the action" onSubmit={() => save.mutate()} submitLabel="Save" busy={save.isPending} error={save.error}>
      <TextField label="Name" name="name" value={name} onChange={setName} required maxLength={200} />
      <TextArea
        label="Code"
        name="code"
        className="code-editor"
        value={code}
        onChange={setCode}
        rows={18}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        required
        hint="exports.onExecutePostLogin = async (event, api) => { … }. Deploy and Test use the saved code."
      />
      {edited ? <p className="hint">Unsaved changes.</p> : null}
      {save.isSuccess && !edited ? <Notice>Saved as a draft. Deploy it to run it at sign-in.</Notice> : null}
    </Form>
  );
}
