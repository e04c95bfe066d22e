import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { User } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { refreshRoleHolders } from '../roles/refresh-role-holders.ts';

/** Deactivate (every session ends), reactivate or unlock, and delete. */
export function UserStatusActions({ user }: { user: User }) {
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['users.list'] });
  const setStatus = useMutation({
    mutationFn: (status: 'active' | 'deactivated') => api.users.update.mutate({ id: user.id, status }),
    onSuccess: refresh,
  });
  // A deleted user leaves their roles and groups: member counts change too.
  const remove = useMutation({
    mutationFn: () => api.users.delete.mutate({ id: user.id }),
    onSuccess: () => Promise.all([refreshRoleHolders(queryClient), queryClient.invalidateQueries({ queryKey: ['groups.list'] })]),
  });

  return (
    <>
      {user.status === 'active' ? (
        <ConfirmButton
          label="Deactivate"
          ariaLabel={`Deactivate ${user.email}`}
          title={`Deactivate ${user.email}?`}
          onConfirm={() => setStatus.mutateAsync('deactivated')}
        >
          They are signed out everywhere at once and cannot sign in until reactivated.
        </ConfirmButton>
      ) : (
        <ConfirmButton
          label={user.status === 'locked' ? 'Unlock' : 'Reactivate'}
          ariaLabel={`${user.status === 'locked' ? 'Unlock' : 'Reactivate'} ${user.email}`}
          title={`${user.status === 'locked' ? 'Unlock' : 'Reactivate'} ${user.email}?`}
          variant="secondary"
          onConfirm={() => setStatus.mutateAsync('active')}
        >
          They can sign in again.
        </ConfirmButton>
      )}
      <ConfirmButton
        label="Delete"
        ariaLabel={`Delete ${user.email}`}
        title={`Delete ${user.email}?`}
        onConfirm={() => remove.mutateAsync()}
      >
        The account, its roles, group memberships and sessions are removed for good. This cannot be undone.
      </ConfirmButton>
    </>
  );
}
