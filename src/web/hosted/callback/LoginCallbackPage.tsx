import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { publicApi } from '../../api/client.ts';
import { isChallenge, type Challenge } from '../../api/types.ts';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';
import { Loading } from '../../ui/feedback/Loading.tsx';
import { HostedLayout } from '../layout/HostedLayout.tsx';
import { CodeStep } from '../sign-in/CodeStep.tsx';
import { useFinishSignIn } from '../sign-in/use-finish-sign-in.ts';

/**
 * /login/callback: where social and SSO sign-ins come back with `?code=` (swapped once for tokens or
 * the second-factor challenge) or `?error=&error_description=`.
 */
export function LoginCallbackPage() {
  const [search] = useSearchParams();
  const [code] = useState(() => search.get('code'));
  const failure = search.get('error');
  const navigate = useNavigate();
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [restartMessage, setRestartMessage] = useState('');
  const finish = useFinishSignIn('/dashboard');
  const exchange = useMutation({
    mutationFn: (oneTimeCode: string) => publicApi.sso.exchange.mutate({ code: oneTimeCode }),
    onSuccess: (result) => (isChallenge(result) ? setChallenge(result) : finish(result)),
  });
  const started = useRef(false);

  useEffect(() => {
    // The code works once: never send it twice, and take it out of the address bar and history.
    if (!code || started.current) return;
    started.current = true;
    navigate('/login/callback', { replace: true });
    exchange.mutate(code);
  }, [code, exchange, navigate]);

  if (challenge) {
    return (
      <HostedLayout title="Two-step verification" subtitle="Your account is protected with an authenticator app.">
        <CodeStep challenge={challenge} onSignedIn={finish} onRestart={(message) => (setChallenge(null), setRestartMessage(message))} />
      </HostedLayout>
    );
  }

  const problem = failure ? (search.get('error_description') ?? 'The sign-in was refused.') : restartMessage;
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
    <HostedLayout title="Signing you in">
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
