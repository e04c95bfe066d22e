import { createContext, useContext, type ReactNode } from 'react';
import type { Me, Permission } from '../api/types.ts';

const CurrentUserContext = createContext<Me | null>(null);

export function CurrentUserProvider({ me, children }: { me: Me; children: ReactNode }) {
  return <CurrentUserContext.Provider value={me}>{children}</CurrentUserContext.Provider>;
}

/** The signed-in person, inside the dashboard (RequireSession has loaded them). */
export function useCurrentUser(): Me {
  const me = useContext(CurrentUserContext);
  if (!me) throw new Error('useCurrentUser outside RequireSession');
  return me;
}

/** Whether the signed-in person's live roles grant `permission` (the server decides again on every call). */
export function useCan(): (permission: Permission) => boolean {
  const me = useCurrentUser();
  return (permission) => me.permissions.includes(permission);
}
