import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Notice } from '../../ui/feedback/Notice.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
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
  const close = () => {
    setOpen(false);
    setEmail('');
    setRoleId('');
    invite.reset();
  };
  const options = [
    { value: '', label: 'Member (default)' },
    ...(roles.data?.data ?? []).filter((r) => r.key !== 'member').map((r) => ({ value: r.id, label: r.name })),
  ];

  return (
    <>
      <Button variant="primary" onClick={() => setOpen(true)}>
        Invite user
      </Button>
      <Dialog title="Invite a user" open={open} onClose={close} description="They receive an email with a link to choose their password.">
        {invite.isSuccess ? (
          <>
            <Notice>Invitation sent to {invite.data.email}. The link works for 7 days.</Notice>
            <div className="form-actions">
              <Button variant="primary" onClick={close}>
                Done
              </Button>
            </div>
          </>
        ) : (
          <Form
            label="Invite a user"
            onSubmit={() => invite.mutate()}
            submitLabel="Send invitation"
            busy={invite.isPending}
            error={invite.error}
          >
            <TextField label="Email" type="email" value={email} onChange={setEmail} required autoComplete="off" />
            <SelectField label="Role" value={roleId} options={options} onChange={setRoleId} />
          </Form>
        )}
      </Dialog>
    </>
  );
}
