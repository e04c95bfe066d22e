import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { Action } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';

/** Deletes an action after asking; sign-ins stop running it at once. */
export function DeleteActionButton({ action, onDeleted }: { action: Action; onDeleted?(): void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.actions.delete.mutate({ id: action.id }),
    onSuccess: async () => {
      queryClient.removeQueries({ queryKey: ['actions.get', action.id] });
      await queryClient.invalidateQueries({ queryKey: ['actions.list'] });
      onDeleted?.();
    },
  });
  return (
    <ConfirmButton
      label="Delete"
      ariaLabel={`Delete ${action.name}`}
      title={`Delete ${action.name}?`}
      onConfirm={() => remove.mutateAsync()}
    >
      Sign-ins stop running it at once, and its code is gone. This cannot be undone.
    </ConfirmButton>
  );
}
