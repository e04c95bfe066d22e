import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Organization } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ErrorAlert } from '../../ui/feedback/ErrorAlert.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { SecretOnce } from '../../ui/secret/SecretOnce.tsx';

/** A single-use, five-minute Admin Portal link for the organization's IT admin to set up SSO. */
export function PortalLinkButton({ organization }: { organization: Organization }) {
  const [open, setOpen] = useState(false);
  const link = useMutation({ mutationFn: () => api.organizations.portalLink.mutate({ organization_id: organization.id }) });
  const start = () => {
    setOpen(true);
    link.mutate();
  };
  return (
    <>
      <Button className="button-small" aria-label={`Admin Portal link for ${organization.name}`} onClick={start}>
        Portal link
      </Button>
      <Dialog
        title={`Admin Portal link for ${organization.name}`}
        open={open}
        onClose={() => {
          setOpen(false);
          link.reset();
        }}
        description="Send it to the organization’s IT admin: it opens a page where they configure their OpenID Connect or SAML identity provider."
      >
        {link.isPending ? <p role="status">Creating a link…</p> : null}
        <ErrorAlert error={link.error} />
        {link.data ? (
          <>
            <SecretOnce label="Admin Portal link" value={link.data.link} />
            <p>It works once, until {formatDateTime(link.data.expires_at)}.</p>
          </>
        ) : null}
      </Dialog>
    </>
  );
}
