import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api } from '../../api/client.ts';
import { useSession } from '../../session/SessionProvider.tsx';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { Pagination } from '../../ui/data/Pagination.tsx';
import { usePageInRange } from '../../ui/data/use-page-in-range.ts';
import { useListParams } from '../../ui/data/use-list-params.ts';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { Section } from '../../ui/layout/Section.tsx';
import { describeUserAgent } from './user-agent.ts';

/** Where the person is signed in, a page at a time (the page in the address); any other session can be ended, or all of them. */
export function SessionsSection() {
  const queryClient = useQueryClient();
  const { signOut } = useSession();
  const navigate = useNavigate();
  const [{ page }, setParams] = useListParams({});
  const input = { page, per_page: 20 };
  const sessions = useQuery({
    queryKey: ['auth.sessions', input],
    queryFn: () => api.auth.sessions.query(input),
    placeholderData: keepPreviousData,
  });
  usePageInRange(sessions.data, (p) => setParams({ page: p }, { replace: true }));
  const revoke = useMutation({
    mutationFn: (id: string) => api.auth.revokeSession.mutate({ id }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['auth.sessions'] }),
  });
  const revokeAll = async () => {
    await api.auth.revokeAllSessions.mutate({});
    await signOut();
    navigate('/login?signed_out=1', { replace: true });
  };

  return (
    <Section
      title="Sessions"
      description="Browsers and apps signed in to your account."
      actions={
        <ConfirmButton label="Sign out everywhere" title="Sign out of every session?" onConfirm={revokeAll}>
          Every session of your account ends, this one included. You will need to sign in again.
        </ConfirmButton>
      }
    >
      <QueryState query={sessions} loading="Loading your sessions…">
        {(p) => (
          <>
            <DataTable
              caption="Your sessions"
              rows={p.data}
              columns={[
                {
                  header: 'Device',
                  cell: (s) => (
                    <>
                      {describeUserAgent(s.user_agent)} {s.current ? <StatusBadge status="This session" tone="good" /> : null}
                    </>
                  ),
                },
                { header: 'IP address', cell: (s) => s.ip ?? 'Unknown' },
                { header: 'Signed in', cell: (s) => formatDateTime(s.created_at) },
                { header: 'Last active', cell: (s) => formatDateTime(s.last_refreshed_at ?? s.created_at) },
              ]}
              actions={{
                cell: (s) =>
                  s.current ? null : (
                    <ConfirmButton
                      label="Sign out"
                      ariaLabel={`Sign out the session of ${describeUserAgent(s.user_agent)} from ${s.ip ?? 'an unknown address'}`}
                      title="Sign out this session?"
                      onConfirm={() => revoke.mutateAsync(s.id)}
                    >
                      {describeUserAgent(s.user_agent)} ({s.ip ?? 'unknown address'}) will have to sign in again.
                    </ConfirmButton>
                  ),
              }}
            />
            <Pagination meta={p.meta} noun="sessions" onPage={(next) => setParams({ page: next })} />
          </>
        )}
      </QueryState>
    </Section>
  );
}
