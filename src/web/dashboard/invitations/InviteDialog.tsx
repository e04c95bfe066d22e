import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { RolePicker } from '../roles/RolePicker.tsx';

/** Invite someone by email: they get a link, valid 7 days, to choose their own password. */
export function InviteDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [roleId, setRoleId] = useState('');
  const invite = useMutation({
    mutationFn: () => api.invitations.create.mutate({ email: email.trim(), ...(roleId ? { role_id: roleId } : {}) }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['invitations.list'] }),
  });
  const reset = () => {
    setEmail('');
    setRoleId('');
  };

  return (
    <FormDialog
      opener="Invite user"
      title="Invite a user"
      description="They receive an email with a link to choose their password."
      submitLabel="Send invitation"
      mutation={invite}
      onReset={reset}
      onOpenChange={setOpen}
      done={(sent) => <Notice>Invitation sent to {sent.email}. The link works for 7 days.</Notice>}
    >
      <TextField label="Email" name="email" type="email" value={email} onChange={setEmail} required autoComplete="off" />
      <RolePicker exclude={(r) => r.key === 'member'} none="Member (default)" value={roleId} onChange={setRoleId} enabled={open} />
    </FormDialog>
  );
}
