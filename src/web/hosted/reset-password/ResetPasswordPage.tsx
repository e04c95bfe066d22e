import { useEffect, useState } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { initialWorkspace } from '../../session/workspace-memory.ts';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { ForgotPasswordForm } from './ForgotPasswordForm.tsx';
import { NewPasswordForm } from './NewPasswordForm.tsx';

/**
 * /reset-password: with the `?token=` of the emailed link, choose a new password; without one, ask for
 * a link. The token leaves the address bar at once (it is a credential).
 */
export function ResetPasswordPage() {
  const [search] = useSearchParams();
  const [token] = useState(() => search.get('token'));
  const navigate = useNavigate();
  useEffect(() => {
    if (token) navigate('/reset-password', { replace: true });
  }, [token, navigate]);

  if (token) {
    return (
      <HostedLayout title="Choose a new password">
        <NewPasswordForm token={token} />
      </HostedLayout>
    );
  }
  return (
    <HostedLayout title="Reset your password" subtitle="We will email you a link to choose a new one.">
      <ForgotPasswordForm initialWorkspaceId={initialWorkspace(search)} />
    </HostedLayout>
  );
}
