import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { NewPasswordFields } from '../../hosted/reset-password/NewPasswordFields.tsx';
import { assertPasswordsMatch } from '../../hosted/reset-password/passwords-match.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Section } from '../../ui/layout/Section.tsx';

/** The current password, then the new one twice; the person's other sessions end, this one stays. */
export function ChangePasswordSection() {
  const queryClient = useQueryClient();
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const change = useMutation({
    mutationFn: async () => {
      assertPasswordsMatch(password, confirmation);
      return api.auth.changePassword.mutate({ current_password: current, new_password: password });
    },
    onSuccess: () => {
      setCurrent('');
      setPassword('');
      setConfirmation('');
      void queryClient.invalidateQueries({ queryKey: ['auth.sessions'] });
    },
  });
  return (
    <Section title="Password" description="Changing it signs out your other sessions; this one stays signed in.">
      {change.isSuccess ? (
        <Notice>
          Password changed. {change.data.ended_sessions === 1 ? '1 other session was' : `${change.data.ended_sessions} other sessions were`}{' '}
          signed out.
        </Notice>
      ) : null}
      <Form
        label="Change password"
        onSubmit={() => change.mutate()}
        submitLabel="Change password"
        busy={change.isPending}
        error={change.error}
      >
        <TextField
          label="Current password"
          name="current_password"
          type="password"
          value={current}
          onChange={setCurrent}
          required
          maxLength={128}
          autoComplete="current-password"
        />
        <NewPasswordFields
          name="new_password"
          password={password}
          confirmation={confirmation}
          onPassword={setPassword}
          onConfirmation={setConfirmation}
        />
      </Form>
    </Section>
  );
}
