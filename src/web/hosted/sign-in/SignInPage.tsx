import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate, useSearchParams } from 'react-router';
import { isChallenge, type Challenge, type SignInResult } from '../../api/types.ts';
import { useSession } from '../../session/SessionProvider.tsx';
import { initialWorkspace } from '../../session/workspace-memory.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { CodeStep } from './CodeStep.tsx';
import { ExternalSignIn } from './ExternalSignIn.tsx';
import { nextPath } from './next-path.ts';
import { PasswordStep } from './PasswordStep.tsx';
import { refusalOf, shownOnce } from './returned-refusal.ts';
import { useFinishSignIn } from './use-finish-sign-in.ts';

/**
 * /login: the dashboard's own sign-in (applications signing people in use /oauth/authorize's hosted page).
 * A social or SSO sign-in of this tab that came back refused lands here again (returned-refusal.ts):
 * its message beside the form it started from, once, the email filled in as it was. A second step
 * (of either) whose challenge can no longer be answered comes back the same way.
 */
export function SignInPage() {
  const [search] = useSearchParams();
  const location = useLocation();
  const { signedIn } = useSession();
  const [refusal] = useState(() => refusalOf(location.state));
  const navigate = useNavigate();
  const { pathname, search: query, hash, state: entry } = location;
  useEffect(() => {
    // Shown once: the entry keeps the form as it was left but not the message, so a reload, or Back to
    // this entry after leaving it, shows the form without a refusal that is over.
    // (A signed-in tab is on its way elsewhere: not brought back here.)
    const kept = refusalOf(entry);
    if (kept?.message && !signedIn) navigate({ pathname, search: query, hash }, { replace: true, state: shownOnce(kept) });
  }, [entry, navigate, pathname, query, hash, signedIn]);
  const [workspaceId, setWorkspaceId] = useState(() => initialWorkspace(search));
  const [email, setEmail] = useState(refusal?.email ?? '');
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  // Why the second step sent the person back to this form (its challenge could no longer be answered).
  const [ended, setEnded] = useState<string | null>(null);
  const finish = useFinishSignIn();

  if (signedIn && !challenge) return <Navigate to={nextPath(search)} replace />;

  const onResult = (result: SignInResult) => {
    setEnded(null);
    if (isChallenge(result)) setChallenge(result);
    else finish(result);
  };

  if (challenge) {
    return (
      <HostedLayout title="Two-step verification" subtitle="Your account is protected with an authenticator app.">
        <CodeStep
          challenge={challenge}
          onSignedIn={finish}
          onRestart={(message) => {
            setChallenge(null);
            setEnded(message);
          }}
        />
      </HostedLayout>
    );
  }

  return (
    <HostedLayout title="Sign in" subtitle="Sign in to manage your account and your workspace.">
      {search.get('signed_out') ? <Notice tone="info">You are signed out.</Notice> : null}
      <PasswordStep
        workspaceId={workspaceId}
        onWorkspaceChange={setWorkspaceId}
        email={email}
        onEmailChange={setEmail}
        onResult={onResult}
        ended={ended}
      />
      <ExternalSignIn workspaceId={workspaceId.trim()} email={email.trim()} refusal={refusal} />
    </HostedLayout>
  );
}
