import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { publicApi } from '../../api/client.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { NewPasswordFields } from './NewPasswordFields.tsx';
import { assertPasswordsMatch } from './passwords-match.ts';

/** Sets a new password with the token of a reset link; every session of the account ends. */
export function NewPasswordForm({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const reset = useMutation({
    mutationFn: async () => {
      assertPasswordsMatch(password, confirmation);
      return publicApi.auth.resetPassword.mutate({ token, password });
    },
  });

  if (reset.isSuccess) {
    return (
      <>
        <Notice>Your password has been changed. Every session of your account has been signed out.</Notice>
        <p>
          <Link className="button button-primary" to="/login">
            Sign in with the new password
          </Link>
        </p>
      </>
    );
  }
  return (
    <Form
      label="Choose a new password"
      onSubmit={() => reset.mutate()}
      submitLabel="Set the new password"
      busy={reset.isPending}
      error={reset.error}
    >
      <NewPasswordFields
        name="password"
        password={password}
        confirmation={confirmation}
        onPassword={setPassword}
        onConfirmation={setConfirmation}
      />
    </Form>
  );
}
