import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Organization } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';

/** What the IT admin submitted through the Admin Portal (secrets masked), and our service-provider values. */
export function SsoConnectionButton({ organization }: { organization: Organization }) {
  const [open, setOpen] = useState(false);
  const connection = useQuery({
    queryKey: ['organizations.ssoConnection', organization.id],
    queryFn: () => api.organizations.ssoConnection.query({ id: organization.id }),
    enabled: open,
  });
  if (!organization.connection) return null;
  return (
    <>
      <Button className="button-small" aria-label={`SSO connection of ${organization.name}`} onClick={() => setOpen(true)}>
        SSO details
      </Button>
      <Dialog title={`SSO connection of ${organization.name}`} open={open} onClose={() => setOpen(false)}>
        <QueryState query={connection} loading="Loading the connection…">
          {(c) => (
            <dl className="facts">
              <dt>Protocol</dt>
              <dd>{c.kind === 'oidc' ? 'OpenID Connect' : c.kind === 'saml' ? 'SAML 2.0' : 'Not submitted yet'}</dd>
              <dt>Active</dt>
              <dd>{c.active ? 'Yes' : 'No'}</dd>
              {c.oidc ? (
                <>
                  <dt>Issuer</dt>
                  <dd>{c.oidc.issuer}</dd>
                  <dt>Client ID</dt>
                  <dd>{c.oidc.client_id}</dd>
                  <dt>Client secret</dt>
                  <dd>{c.oidc.client_secret}</dd>
                </>
              ) : null}
              {c.saml ? (
                <>
                  <dt>IdP entity ID</dt>
                  <dd>{c.saml.entity_id}</dd>
                  <dt>IdP sign-in URL</dt>
                  <dd>{c.saml.sso_url}</dd>
                </>
              ) : null}
              <dt>Our redirect URI</dt>
              <dd>{c.service_provider.redirect_uri}</dd>
              <dt>Our ACS URL</dt>
              <dd>{c.service_provider.acs_url}</dd>
              <dt>Our entity ID</dt>
              <dd>{c.service_provider.entity_id}</dd>
            </dl>
          )}
        </QueryState>
      </Dialog>
    </>
  );
}
