import { useQuery } from '@tanstack/react-query';
import { useEffect, type ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { api } from '../api/client.ts';
import { ErrorAlert } from '../ui/feedback/ErrorAlert.tsx';
import { Loading } from '../ui/feedback/Loading.tsx';
import { CurrentUserProvider } from './CurrentUser.tsx';
import { useSession } from './SessionProvider.tsx';
import { tokenStore } from './token-store.ts';
import { rememberWorkspace } from './workspace-memory.ts';

/**
 * The dashboard's gate: signed-out visitors go to /login (and come back here after), the rest get their
 * profile loaded. A session the service ended (revoked elsewhere, expired) says so there.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const { signedIn } = useSession();
  const location = useLocation();
  const me = useQuery({ queryKey: ['auth.me'], queryFn: () => api.auth.me.query({}), enabled: signedIn });

  useEffect(() => {
    if (me.data) rememberWorkspace(me.data.workspace_id);
  }, [me.data]);

  if (!signedIn) {
    const next = new URLSearchParams({ next: `${location.pathname}${location.search}` });
    if (tokenStore.endedByService()) next.set('session_ended', '1');
    return <Navigate to={`/login?${next.toString()}`} replace />;
  }
  if (me.isPending) return <Loading label="Loading your account…" />;
  if (me.isError) return <ErrorAlert error={me.error} />;
  return <CurrentUserProvider me={me.data}>{children}</CurrentUserProvider>;
}
