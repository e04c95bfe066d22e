import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { publicApi } from '../../api/client.ts';
import { FormProblem } from '../../api/errors.ts';
import { isChallenge, type Challenge } from '../../api/types.ts';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';
import { Loading } from '../../ui/feedback/Loading.tsx';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { CodeStep } from '../sign-in/CodeStep.tsx';
import { EXPIRED_CHALLENGE } from '../sign-in/ended-challenge.ts';
import { forgetChallenge, keepChallenge, keptChallenge } from '../sign-in/kept-challenge.ts';
import { backToSignIn, exchangeFailure } from '../sign-in/returned-refusal.ts';
import { forgetSignIn, readSignIn } from '../sign-in/sign-in-binding.ts';
import { useFinishSignIn } from '../sign-in/use-finish-sign-in.ts';

const NOT_THIS_TAB =
  'This sign-in was not started from this browser tab, so it was not completed. If you meant to sign in, start again from the sign-in page.';

const REFUSED = 'The sign-in was refused.';

/**
 * A refusal this tab did not start a sign-in for: anyone can link to this page with any
 * `error_description`, so its text is not shown as ours.
 */
const NOT_THIS_TABS_REFUSAL =
  'A sign-in came back refused, but it was not started from this browser tab. If you meant to sign in, start again from the sign-in page.';

/**
 * /login/callback: where social and SSO sign-ins come back with `?code=&state=` (swapped once, with the
 * PKCE verifier of the sign-in this tab started, for tokens or the second-factor challenge) or
 * `?error=&error_description=`. A code this tab did not start a sign-in for is never exchanged: it
 * may be someone else's, sent as a link to sign this browser in to their account. A refusal of the
 * sign-in this tab started, a failed exchange of its code, or a second step whose challenge can no longer
 * be answered, goes back to /login, shown beside the form it came from, filled in again. The second step
 * is kept for its history entry (kept-challenge.ts): a reload, or Back/Forward to it, shows the code step
 * again while its challenge lives, and goes back to /login with the expiry's message once it has not.
 */
export function LoginCallbackPage() {
  const [search] = useSearchParams();
  const [code] = useState(() => search.get('code'));
  const [state] = useState(() => search.get('state'));
  const failure = search.get('error');
  // The sign-in this tab started for this state, if any (read here, forgotten once below).
  const [started] = useState(() => readSignIn(state));
  const location = useLocation();
  // The code step this entry showed before a reload or Back/Forward (no code or error in the address then).
  const [kept] = useState(() => (code || failure ? null : keptChallenge('callback', location.key)));
  // Where this sign-in started: the form a refusal or an ended second step goes back to.
  const origin = started?.origin ?? kept?.origin ?? null;
  // A refusal of the sign-in this tab started: the sign-in page it started from.
  const refusedFrom = failure !== null && !code ? (started?.origin ?? null) : null;
  const navigate = useNavigate();
  const [challenge, setChallenge] = useState<Challenge | null>(kept && !kept.expired ? kept.challenge : null);
  const [restartMessage, setRestartMessage] = useState('');
  const finish = useFinishSignIn('/dashboard');
  const exchange = useMutation({
    mutationFn: async (bound: { code: string; verifier: string | null }) => {
      // Not this tab's sign-in: the code is not sent at all (the server would sign this browser in to its account).
      if (bound.verifier === null) throw new FormProblem(NOT_THIS_TAB);
      return publicApi.sso.exchange.mutate({ code: bound.code, code_verifier: bound.verifier });
    },
    onSuccess: (result) => (isChallenge(result) ? setChallenge(result) : finish(result)),
    // This tab's sign-in, let in by the provider, but its code not exchanged: back to the form it started
    // from, like a refusal (its entry is already forgotten, so nothing comes back here by itself).
    onError: (error) => {
      if (!started?.origin) return;
      const back = backToSignIn(started.origin, exchangeFailure(error));
      navigate(back.to, { replace: true, state: back.state });
    },
  });
  /**
   * The second step ended without a sign-in (its challenge can no longer be answered, or the person chose
   * another account): back to the form it started from like a refusal, the message beside it.
   */
  const restart = (message: string | null) => {
    if (origin) {
      const back = backToSignIn(origin, message);
      navigate(back.to, { replace: true, state: back.state });
    } else if (message === null) {
      navigate('/login', { replace: true });
    } else {
      // An entry kept before the page kept its origin: no form to go back to, the message here.
      setChallenge(null);
      setRestartMessage(message);
    }
  };

  const handled = useRef(false);

  useEffect(() => {
    if (challenge) keepChallenge({ page: 'callback', entry: location.key, challenge, origin, email: origin?.email ?? '' });
  }, [challenge, location.key, origin]);
  const expiredHandled = useRef(false);
  useEffect(() => {
    // Reloaded (or come back to) after the challenge's life: over, back to the form it started from.
    if (!kept?.expired || expiredHandled.current) return;
    expiredHandled.current = true;
    forgetChallenge();
    restart(EXPIRED_CHALLENGE);
  });

  useEffect(() => {
    if (handled.current || (!code && !failure)) return;
    handled.current = true;
    // The sign-in this tab started is used once, whatever came back (a code, an error, someone else's code).
    forgetSignIn();
    if (!code) {
      if (refusedFrom) {
        // Back to the form the person left, with the message beside it (as text, from the history entry).
        const back = backToSignIn(refusedFrom, search.get('error_description') ?? REFUSED);
        navigate(back.to, { replace: true, state: back.state });
      }
      return;
    }
    // The code works once: never send it twice, and take it out of the address bar and history.
    navigate('/login/callback', { replace: true });
    exchange.mutate({ code, verifier: started?.verifier ?? null });
  }, [code, failure, refusedFrom, started, search, exchange, navigate]);

  // On its way back to the sign-in form.
  if (refusedFrom || (exchange.isError && started?.origin) || (kept?.expired && origin)) return null;

  if (challenge) {
    return (
      <HostedLayout title="Two-step verification" subtitle="Your account is protected with an authenticator app.">
        <CodeStep challenge={challenge} onSignedIn={finish} onRestart={restart} />
      </HostedLayout>
    );
  }

  const problem = failure ? (started ? (search.get('error_description') ?? REFUSED) : NOT_THIS_TABS_REFUSAL) : restartMessage;
  if (problem || !code) {
    return (
      <HostedLayout title="Sign-in not completed">
        <div className="alert alert-error" role="alert">
          <p>{problem || 'This page is where sign-ins with another account finish, but no sign-in came back to it.'}</p>
        </div>
        <p>
          <Link to="/login">Back to sign-in</Link>
        </p>
      </HostedLayout>
    );
  }

  return (
    <HostedLayout title={exchange.isError ? 'Sign-in not completed' : 'Signing you in'}>
      {exchange.isError ? (
        <>
          <ErrorAlert error={exchange.error} />
          <p>
            <Link to="/login">Back to sign-in</Link>
          </p>
        </>
      ) : (
        <Loading label="Finishing your sign-in…" />
      )}
    </HostedLayout>
  );
}
