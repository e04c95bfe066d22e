import { useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, useSyncExternalStore, type ReactNode } from 'react';
import { api } from '../api/client.ts';
import type { Tokens } from '../api/types.ts';
import { tokenStore } from './token-store.ts';

interface SessionValue {
  signedIn: boolean;
  /** Keeps the tokens of a sign-in (password, second factor, invitation, social) and forgets cached answers. */
  completeSignIn(tokens: Tokens): void;
  /** Ends the session on the server, then forgets it here whatever the server said. */
  signOut(): Promise<void>;
}

const SessionContext = createContext<SessionValue | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const signedIn = useSyncExternalStore(tokenStore.subscribe, () => tokenStore.hasSession());

  const completeSignIn = useCallback(
    (tokens: Tokens) => {
      queryClient.clear();
      tokenStore.save(tokens);
    },
    [queryClient],
  );

  const signOut = useCallback(async () => {
    try {
      await api.auth.logout.mutate({});
    } catch (error) {
      // The session may already be over (revoked elsewhere); this tab forgets it either way.
      console.warn('sign-out: the server did not confirm', error);
    }
    tokenStore.clear();
    queryClient.clear();
  }, [queryClient]);

  const value = useMemo(() => ({ signedIn, completeSignIn, signOut }), [signedIn, completeSignIn, signOut]);
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside SessionProvider');
  return value;
}
