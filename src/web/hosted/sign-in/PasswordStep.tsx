import { useMutation } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { tenantApi } from '../../api/client.ts';
import { FormProblem, inNamedWorkspace } from '../../api/errors.ts';
import type { SignInResult } from '../../api/types.ts';
import { rememberWorkspace } from '../../session/workspace-memory.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

interface PasswordStepProps {
  workspaceId: string;
  onWorkspaceChange(workspaceId: string): void;
  email: string;
  onEmailChange(email: string): void;
  onResult(result: SignInResult): void;
  /** Why this sign-in's second step sent the person back here: shown in the form until it is sent again. */
  ended: string | null;
}

/** The first step of a sign-in: workspace, email and password. */
export function PasswordStep({ workspaceId, onWorkspaceChange, email, onEmailChange, onResult, ended }: PasswordStepProps) {
  const [password, setPassword] = useState('');
  const endedProblem = useMemo(() => (ended === null ? null : new FormProblem(ended)), [ended]);
  const login = useMutation({
    mutationFn: () => inNamedWorkspace(tenantApi(workspaceId.trim()).auth.login.mutate({ email: email.trim(), password })),
    onSuccess: (result) => {
      rememberWorkspace(workspaceId.trim());
      setPassword('');
      onResult(result);
    },
  });

  const forgot = `/reset-password${workspaceId ? `?workspace=${encodeURIComponent(workspaceId.trim())}` : ''}`;
  return (
    <Form
      label="Sign in"
      onSubmit={() => login.mutate()}
      submitLabel="Sign in"
      busy={login.isPending}
      error={login.isIdle ? endedProblem : login.error}
    >
      <TextField
        label="Workspace ID"
        value={workspaceId}
        onChange={onWorkspaceChange}
        required
        autoComplete="off"
        spellCheck={false}
        hint="It starts with wsp_. Your administrator can tell you yours."
      />
      <TextField label="Email" name="email" type="email" value={email} onChange={onEmailChange} required autoComplete="username" />
      <TextField
        label="Password"
        name="password"
        type="password"
        value={password}
        onChange={setPassword}
        required
        maxLength={128}
        autoComplete="current-password"
      />
      <p className="form-link">
        <Link to={forgot}>Forgot your password?</Link>
      </p>
    </Form>
  );
}
