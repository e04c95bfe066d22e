import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { FormDialog } from '../../ui/overlay/FormDialog.tsx';
import { useAllRoles } from '../roles/use-roles.ts';

/** Invite someone by email: they get a link, valid 7 days, to choose their own password. */
export function InviteDialog() {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const [email, setEmail] = useState('');
  const [roleId, setRoleId] = useState('');
  const roles = useAllRoles(open);
  const invite = useMutation({
    mutationFn: () => api.invitations.create.mutate({ email: email.trim(), ...(roleId ? { role_id: roleId } : {}) }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['invitations.list'] }),
  });
  const reset = () => {
    setEmail('');
    setRoleId('');
  };
  const options = [
    { value: '', label: 'Member (default)' },
    ...(roles.data?.data ?? []).filter((r) => r.key !== 'member').map((r) => ({ value: r.id, label: r.name })),
  ];

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
      <SelectField label="Role" name="role_id" value={roleId} options={options} onChange={setRoleId} />
    </FormDialog>
  );
}
