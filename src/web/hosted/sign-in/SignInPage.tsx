import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate, useSearchParams } from 'react-router';
import { isChallenge, type Challenge, type SignInResult } from '../../api/types.ts';
import { useSession } from '../../session/SessionProvider.tsx';
import { initialWorkspace } from '../../session/workspace-memory.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { CodeStep } from './CodeStep.tsx';
import { EXPIRED_CHALLENGE } from './ended-challenge.ts';
import { ExternalSignIn } from './ExternalSignIn.tsx';
import { forgetChallenge, keepChallenge, keptChallenge } from './kept-challenge.ts';
import { nextPath } from './next-path.ts';
import { PasswordStep } from './PasswordStep.tsx';
import { refusalOf, shownOnce } from './returned-refusal.ts';
import { useFinishSignIn } from './use-finish-sign-in.ts';

/**
 * /login: the dashboard's own sign-in (applications signing people in use /oauth/authorize's hosted page).
 * A social or SSO sign-in of this tab that came back refused lands here again (returned-refusal.ts):
 * its message beside the form it started from, once, the email filled in as it was. A second step
 * (of either) whose challenge can no longer be answered comes back the same way. The password form's
 * second step is kept for its history entry (kept-challenge.ts): a reload, or Back/Forward to it, shows
 * the code step again while its challenge lives, and the form with the expiry's message once it has not.
 */
export function SignInPage() {
  const [search] = useSearchParams();
  const location = useLocation();
  const { signedIn } = useSession();
  const [refusal] = useState(() => refusalOf(location.state));
  const navigate = useNavigate();
  const { pathname, search: query, hash, state: entry, key: entryKey } = location;
  // The code step this entry showed before a reload or Back/Forward, if its challenge was not answered.
  const [kept] = useState(() => keptChallenge('login', entryKey));
  useEffect(() => {
    // Shown once: the entry keeps the form as it was left but not the message, so a reload, or Back to
    // this entry after leaving it, shows the form without a refusal that is over.
    // (A signed-in tab is on its way elsewhere: not brought back here.)
    const kept = refusalOf(entry);
    if (kept?.message && !signedIn) navigate({ pathname, search: query, hash }, { replace: true, state: shownOnce(kept) });
  }, [entry, navigate, pathname, query, hash, signedIn]);
  const [workspaceId, setWorkspaceId] = useState(() => initialWorkspace(search));
  const [email, setEmail] = useState(refusal?.email ?? kept?.email ?? '');
  const [challenge, setChallenge] = useState<Challenge | null>(kept && !kept.expired ? kept.challenge : null);
  // Why the second step sent the person back to this form (its challenge could no longer be answered).
  const [ended, setEnded] = useState<string | null>(kept?.expired ? EXPIRED_CHALLENGE : null);
  const finish = useFinishSignIn();
  useEffect(() => {
    if (kept?.expired) forgetChallenge();
  }, [kept]);
  useEffect(() => {
    if (!challenge) return;
    // The step is kept for its own entry: the first one a tab opens has no key of its own (`default`,
    // as a later /login typed in this tab would), so it gets one first.
    if (entryKey === 'default') navigate({ pathname, search: query, hash }, { replace: true, state: entry });
    else keepChallenge({ page: 'login', entry: entryKey, challenge, origin: null, email: email.trim() });
  }, [challenge, entryKey, email, entry, navigate, pathname, query, hash]);

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
      {search.get('session_ended') ? (
        <Notice tone="info">
          Your session has ended: it was signed out from another device or by an administrator, or it expired. Sign in again to continue.
        </Notice>
      ) : null}
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
