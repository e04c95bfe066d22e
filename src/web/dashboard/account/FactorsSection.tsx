import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { Factor } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { EmptyState } from '../../ui/feedback/EmptyState.tsx';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { Section } from '../../ui/layout/Section.tsx';
import { EnrollDialog, EnrollFactorDialog } from './EnrollFactorDialog.tsx';

/** Two-factor authentication: the person's authenticator apps. */
export function FactorsSection() {
  const queryClient = useQueryClient();
  const [verifiedName, setVerifiedName] = useState<string | null>(null);
  /** The unconfirmed app whose setup is being finished; held here, as its row goes when its key is replaced. */
  const [resuming, setResuming] = useState<Factor | null>(null);
  const factors = useQuery({ queryKey: ['mfa.factors', { per_page: 100 }], queryFn: () => api.mfa.listFactors.query({ per_page: 100 }) });
  const remove = useMutation({
    mutationFn: (id: string) => api.mfa.removeFactor.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['mfa.factors'] }),
  });

  return (
    <Section
      title="Two-factor authentication"
      description="Once an authenticator app is confirmed, every sign-in asks for a code after your password."
      actions={<EnrollFactorDialog onVerified={(factor) => setVerifiedName(factor.name)} />}
    >
      {verifiedName ? <Notice>{verifiedName} is confirmed. Your next sign-in will ask for a code.</Notice> : null}
      <QueryState
        query={factors}
        loading="Loading your authenticator apps…"
        isEmpty={(page) => page.data.length === 0}
        empty={<EmptyState title="No authenticator app yet">Add one to protect your account with a second step at sign-in.</EmptyState>}
      >
        {(page) => (
          <DataTable
            caption="Your authenticator apps"
            rows={page.data}
            columns={[
              { header: 'Name', cell: (f) => f.name },
              { header: 'Status', cell: (f) => <StatusBadge status={f.status} tone={f.status === 'Verified' ? 'good' : 'warn'} /> },
              { header: 'Added', cell: (f) => formatDateTime(f.created_at) },
            ]}
            actions={{
              cell: (f) => (
                <>
                  {f.status === 'Pending verification' ? (
                    <Button className="button-small" aria-label={`Finish setting up ${f.name}`} onClick={() => setResuming(f)}>
                      Finish setup
                    </Button>
                  ) : null}
                  <ConfirmButton
                    label="Remove"
                    ariaLabel={`Remove ${f.name}`}
                    title={`Remove ${f.name}?`}
                    onConfirm={() => remove.mutateAsync(f.id)}
                  >
                    {f.status === 'Verified'
                      ? 'Its codes will no longer be accepted. If it is your only confirmed app, sign-in stops asking for a code.'
                      : 'This app was never confirmed; removing it changes nothing at sign-in.'}
                  </ConfirmButton>
                </>
              ),
            }}
          />
        )}
      </QueryState>
      <EnrollDialog
        key={resuming?.id}
        open={resuming !== null}
        pending={resuming ?? undefined}
        onClose={() => setResuming(null)}
        onVerified={(factor) => setVerifiedName(factor.name)}
      />
    </Section>
  );
}
