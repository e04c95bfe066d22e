import type { QueryClient } from '@tanstack/react-query';

/**
 * After a change to who holds which role (a role given or taken, a role or user deleted, a user
 * created as a member), every screen that shows it asks again: a user's roles, the Roles column of the
 * users list, each role's member count, and the signed-in person's own permissions (they may have
 * changed their own roles), so nothing shows the old state until a reload.
 */
export function refreshRoleHolders(queryClient: QueryClient): Promise<unknown> {
  return Promise.all(
    [['roles.ofUser'], ['users.list'], ['roles.list'], ['auth.me']].map((queryKey) => queryClient.invalidateQueries({ queryKey })),
  );
}
