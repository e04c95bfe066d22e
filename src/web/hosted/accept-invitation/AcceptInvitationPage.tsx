import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { publicApi } from '../../api/client.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { NewPasswordFields } from '../reset-password/NewPasswordFields.tsx';
import { assertPasswordsMatch } from '../reset-password/passwords-match.ts';
import { useFinishSignIn } from '../sign-in/use-finish-sign-in.ts';

/** /accept-invitation: the invitee names themself and picks a password; the account is made and signed in. */
export function AcceptInvitationPage() {
  const [search] = useSearchParams();
  const [token] = useState(() => search.get('token'));
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [confirmation, setConfirmation] = useState('');
  const finish = useFinishSignIn('/dashboard/account?welcome=1');
  const accept = useMutation({
    mutationFn: async (invitation: string) => {
      assertPasswordsMatch(password, confirmation);
      return publicApi.invitations.accept.mutate({ token: invitation, password, ...(name.trim() ? { name: name.trim() } : {}) });
    },
    onSuccess: finish,
  });

  useEffect(() => {
    if (token) navigate('/accept-invitation', { replace: true });
  }, [token, navigate]);

  if (!token) {
    return (
      <HostedLayout title="Invitation link incomplete">
        <div className="alert alert-error" role="alert">
          <p>This link has no invitation in it. Open the link from the invitation email again, or ask for a new invitation.</p>
        </div>
        <p>
          <Link to="/login">Go to sign-in</Link>
        </p>
      </HostedLayout>
    );
  }
  return (
    <HostedLayout title="Accept your invitation" subtitle="Choose your password to create your account.">
      <Form
        label="Create your account"
        onSubmit={() => accept.mutate(token)}
        submitLabel="Create my account"
        busy={accept.isPending}
        error={accept.error}
      >
        <TextField label="Your name" name="name" value={name} onChange={setName} autoComplete="name" hint="Optional." />
        <NewPasswordFields
          label="Password"
          name="password"
          password={password}
          confirmation={confirmation}
          onPassword={setPassword}
          onConfirmation={setConfirmation}
        />
      </Form>
    </HostedLayout>
  );
}
