import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { tenantApi } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormProblem } from '../../api/errors.ts';
import type { ReturnedRefusal } from './returned-refusal.ts';
import { boundStartUrl, type SignInOrigin } from './sign-in-binding.ts';
import { serviceOrigin } from './service-origin.ts';

interface ExternalSignInProps {
  workspaceId: string;
  /** The sign-in form's email: kept with a provider's sign-in, to be filled in again if it comes back refused. */
  email: string;
  /** This tab's social or SSO sign-in that came back refused: its message shown where it started. */
  refusal: ReturnedRefusal | null;
}

/** The refusal's message, as a problem the forms show (as text), for the way it started. */
const refusalProblem = (refusal: ReturnedRefusal | null, via: SignInOrigin['via']) =>
  refusal?.via === via && refusal.message !== null ? new FormProblem(refusal.message) : null;

/**
 * The workspace's social providers and enterprise single sign-on; both come back to /login/callback,
 * which finishes only a sign-in this tab started (sign-in-binding.ts), and sends a refused one back here.
 */
export function ExternalSignIn({ workspaceId, email, refusal }: ExternalSignInProps) {
  const [ssoEmail, setSsoEmail] = useState(() => (refusal?.via === 'sso' ? refusal.email : ''));
  const [ssoOpen, setSsoOpen] = useState(refusal?.via === 'sso');
  const [ssoError, setSsoError] = useState<unknown>(() => refusalProblem(refusal, 'sso'));
  const [starting, setStarting] = useState<string | null>(null);
  const [startError, setStartError] = useState<unknown>(() => refusalProblem(refusal, 'social'));
  // Only a whole id is looked up (26 characters after the prefix), not every prefix typed on the way.
  const valid = /^wsp_[0-9a-z]{26}$/.test(workspaceId);
  const providers = useQuery({
    queryKey: ['sso.providers', workspaceId],
    queryFn: () => tenantApi(workspaceId).sso.providers.query({}),
    enabled: valid,
    retry: false,
  });
  useEffect(() => {
    // Back from the provider through the browser's page cache: the buttons work again.
    const shown = (event: PageTransitionEvent) => {
      if (event.persisted) setStarting(null);
    };
    window.addEventListener('pageshow', shown);
    return () => window.removeEventListener('pageshow', shown);
  }, []);
  if (!valid) return null;

  // Opened at another address than BASE_URL's (127.0.0.1 for localhost): the sign-in would come back to
  // a tab that cannot read what this one remembered, and be refused. Send the person there first.
  const home = serviceOrigin();
  if (home !== null && home !== window.location.origin) {
    const there = `${home}/login?${new URLSearchParams({ workspace: workspaceId }).toString()}`;
    return (
      <div className="external-sign-in">
        <p className="divider">
          <span>or</span>
        </p>
        <div className="alert alert-info" role="status">
          <p>
            Sign-in with another account or your company’s single sign-on finishes at {home}, the address this service is configured with
            (its BASE_URL), so it has to start there too.
          </p>
          <p>
            <a href={there}>Open the sign-in page at {home}</a>
          </p>
        </div>
      </div>
    );
  }

  /** Leaves for the provider with this tab's PKCE challenge and state on the start URL. */
  const start = (which: string, startUrl: string, origin: SignInOrigin) => {
    let url: string;
    try {
      url = boundStartUrl(startUrl, origin);
    } catch (error) {
      // sessionStorage refused the entry (storage blocked or full): starting unbound would only be refused at the end.
      console.warn('sign-in: the sign-in could not be remembered', error);
      setStartError(
        new FormProblem('This browser did not let the page remember the sign-in. Allow site data for this page and try again.'),
      );
      return;
    }
    setStarting(which);
    setStartError(null);
    setSsoError(null);
    window.location.assign(url);
  };

  const startSso = () => {
    const address = ssoEmail.trim();
    const query = new URLSearchParams({ workspace_id: workspaceId, email: address });
    start('sso', `/api/v1/auth/sso/start?${query.toString()}`, { workspaceId, via: 'sso', email: address });
  };

  return (
    <div className="external-sign-in">
      <p className="divider">
        <span>or</span>
      </p>
      {providers.data && providers.data.data.length > 0 ? (
        <ul className="provider-list" aria-label="Sign in with another account">
          {providers.data.data.map((p) => (
            <li key={p.provider}>
              <Button
                className="button-block"
                busy={starting === p.provider}
                disabled={starting !== null}
                onClick={() => start(p.provider, p.start_url, { workspaceId, via: 'social', email })}
              >
                Continue with {p.display_name}
              </Button>
            </li>
          ))}
        </ul>
      ) : null}
      <ErrorAlert error={startError} />
      <details className="sso" open={ssoOpen} onToggle={(event) => setSsoOpen(event.currentTarget.open)}>
        <summary>Sign in with your company’s single sign-on</summary>
        <Form label="Single sign-on" onSubmit={startSso} submitLabel="Continue with SSO" busy={starting === 'sso'} error={ssoError}>
          <TextField label="Work email" type="email" value={ssoEmail} onChange={setSsoEmail} required autoComplete="email" />
        </Form>
      </details>
    </div>
  );
}
