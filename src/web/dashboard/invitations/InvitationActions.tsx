import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api/client.ts';
import type { Invitation } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';

/** A pending invitation can be sent again (the old link stops working) or revoked. */
export function InvitationActions({ invitation }: { invitation: Invitation }) {
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['invitations.list'] });
  const resend = useMutation({ mutationFn: () => api.invitations.resend.mutate({ id: invitation.id }), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: () => api.invitations.revoke.mutate({ id: invitation.id }), onSuccess: refresh });
  if (invitation.status !== 'pending') return null;
  return (
    <>
      <ConfirmButton
        label="Resend"
        variant="secondary"
        ariaLabel={`Resend the invitation to ${invitation.email}`}
        title={`Send the invitation to ${invitation.email} again?`}
        onConfirm={() => resend.mutateAsync()}
      >
        A new link is emailed; the previous link stops working.
      </ConfirmButton>
      <ConfirmButton
        label="Revoke"
        ariaLabel={`Revoke the invitation to ${invitation.email}`}
        title={`Revoke the invitation to ${invitation.email}?`}
        onConfirm={() => revoke.mutateAsync()}
      >
        The link in their email stops working.
      </ConfirmButton>
    </>
  );
}
