import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { tenantApi } from '../../api/client.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';

/** The workspace's social providers and enterprise single sign-on; both come back to /login/callback. */
export function ExternalSignIn({ workspaceId }: { workspaceId: string }) {
  const [ssoEmail, setSsoEmail] = useState('');
  // Only a whole id is looked up (26 characters after the prefix), not every prefix typed on the way.
  const valid = /^wsp_[0-9a-z]{26}$/.test(workspaceId);
  const providers = useQuery({
    queryKey: ['sso.providers', workspaceId],
    queryFn: () => tenantApi(workspaceId).sso.providers.query({}),
    enabled: valid,
    retry: false,
  });
  if (!valid) return null;

  const startSso = () => {
    const query = new URLSearchParams({ workspace_id: workspaceId, email: ssoEmail.trim() });
    window.location.assign(`/api/v1/auth/sso/start?${query.toString()}`);
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
              <a className="button button-secondary button-block" href={p.start_url}>
                Continue with {p.display_name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      <details className="sso">
        <summary>Sign in with your company’s single sign-on</summary>
        <Form label="Single sign-on" onSubmit={startSso} submitLabel="Continue with SSO" busy={false} error={null}>
          <TextField label="Work email" type="email" value={ssoEmail} onChange={setSsoEmail} required autoComplete="email" />
        </Form>
      </details>
    </div>
  );
}
