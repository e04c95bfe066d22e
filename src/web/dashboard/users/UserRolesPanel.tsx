import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { User } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { QueryState } from '../../ui/data/QueryState.tsx';
import { readAllPages } from '../../ui/data/all-pages.ts';
import { formatDateTime } from '../../ui/data/format.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { TextField } from '../../ui/forms/TextField.tsx';
import { Section } from '../../ui/layout/Section.tsx';
import { refreshRoleHolders } from '../roles/refresh-role-holders.ts';
import { RolePicker } from '../roles/RolePicker.tsx';

/** A user's live roles, every page of them: revoke one, or give one found by searching the workspace's roles (optionally until a date). */
export function UserRolesPanel({ user }: { user: User }) {
  const queryClient = useQueryClient();
  const key = ['roles.ofUser', user.id];
  const held = useQuery({ queryKey: key, queryFn: () => readAllPages((page) => api.roles.ofUser.query({ id: user.id, ...page })) });
  const [roleId, setRoleId] = useState('');
  const [until, setUntil] = useState('');
  const refresh = () => refreshRoleHolders(queryClient);
  const assign = useMutation({
    mutationFn: () =>
      api.roles.assign.mutate({ user_id: user.id, role_id: roleId, ...(until ? { expires_at: new Date(until).toISOString() } : {}) }),
    onSuccess: () => {
      setRoleId('');
      setUntil('');
      return refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api.roles.revoke.mutate({ user_id: user.id, role_id: id }),
    onSuccess: refresh,
  });

  const heldIds = new Set((held.data?.data ?? []).map((r) => r.id));

  return (
    <Section title="Roles">
      <QueryState query={held} loading="Loading roles…">
        {(all) => (
          <ul className="chip-list" aria-label={`Roles of ${user.email}`}>
            {all.data.map((r) => (
              <li key={r.id} className="chip">
                <span>
                  {r.name}
                  {r.expires_at ? <small> until {formatDateTime(r.expires_at)}</small> : null}
                </span>
                <ConfirmButton
                  label="Revoke"
                  ariaLabel={`Revoke ${r.name}`}
                  title={`Revoke ${r.name} from ${user.email}?`}
                  onConfirm={() => revoke.mutateAsync(r.id)}
                >
                  The role stops granting its permissions at once.
                </ConfirmButton>
              </li>
            ))}
          </ul>
        )}
      </QueryState>
      <Form label="Give a role" onSubmit={() => assign.mutate()} submitLabel="Give role" busy={assign.isPending} error={assign.error}>
        <RolePicker exclude={(r) => heldIds.has(r.id)} none="Choose a role" value={roleId} onChange={setRoleId} required />
        <TextField
          label="Until"
          name="expires_at"
          type="datetime-local"
          value={until}
          onChange={setUntil}
          hint="Optional: the role stops granting at this time."
        />
      </Form>
    </Section>
  );
}
