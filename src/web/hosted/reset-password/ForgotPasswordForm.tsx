import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { tenantApi } from '../../api/client.ts';
import { inNamedWorkspace } from '../../api/errors.ts';
import { rememberWorkspace } from '../../session/workspace-memory.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

/** Asks for a reset link. The answer is the same whether or not the account exists. */
export function ForgotPasswordForm({ initialWorkspaceId }: { initialWorkspaceId: string }) {
  const [workspaceId, setWorkspaceId] = useState(initialWorkspaceId);
  const [email, setEmail] = useState('');
  const forgot = useMutation({
    mutationFn: () => inNamedWorkspace(tenantApi(workspaceId.trim()).auth.forgotPassword.mutate({ email: email.trim() })),
    onSuccess: () => rememberWorkspace(workspaceId.trim()),
  });

  if (forgot.isSuccess) {
    return (
      <>
        <Notice>{forgot.data.message}</Notice>
        <p>The link in the email works once, for 30 minutes.</p>
        <p>
          <Link to="/login">Back to sign-in</Link>
        </p>
      </>
    );
  }
  return (
    <Form
      label="Request a reset link"
      onSubmit={() => forgot.mutate()}
      submitLabel="Email me a reset link"
      busy={forgot.isPending}
      error={forgot.error}
    >
      <TextField
        label="Workspace ID"
        value={workspaceId}
        onChange={setWorkspaceId}
        required
        spellCheck={false}
        hint="It starts with wsp_."
      />
      <TextField label="Email" name="email" type="email" value={email} onChange={setEmail} required autoComplete="email" />
      <p className="form-link">
        <Link to="/login">Back to sign-in</Link>
      </p>
    </Form>
  );
}
