import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { GroupOfUser, User } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { readAllPages } from '../../ui/data/all-pages.ts';
import { Form } from '../../ui/forms/Form.tsx';
import { SelectField } from '../../ui/forms/SelectField.tsx';
import { Section } from '../../ui/layout/Section.tsx';

/**
 * The groups a user belongs to (every one: `groups.ofUsers` answers them all): add them to one, take them
 * out of one. The picker offers every group of the workspace, read page after page.
 */
export function UserGroupsPanel({ user, memberOf }: { user: User; memberOf: GroupOfUser[] }) {
  const queryClient = useQueryClient();
  const groups = useQuery({ queryKey: ['groups.list', 'all'], queryFn: () => readAllPages((page) => api.groups.list.query(page)) });
  const [groupId, setGroupId] = useState('');
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['users.list'] }),
      queryClient.invalidateQueries({ queryKey: ['groups.list'] }),
    ]);
  const add = useMutation({
    mutationFn: () => api.groups.addMember.mutate({ id: groupId, user_id: user.id }),
    onSuccess: () => {
      setGroupId('');
      return refresh();
    },
  });
  const remove = useMutation({ mutationFn: (id: string) => api.groups.removeMember.mutate({ id, user_id: user.id }), onSuccess: refresh });

  const options = [
    { value: '', label: 'Choose a group' },
    ...(groups.data?.data ?? []).filter((g) => !memberOf.some((m) => m.id === g.id)).map((g) => ({ value: g.id, label: g.name })),
  ];
  return (
    <Section title="Groups">
      {memberOf.length === 0 ? <p className="muted">Not in any group.</p> : null}
      <ul className="chip-list" aria-label={`Groups of ${user.email}`}>
        {memberOf.map((g) => (
          <li key={g.id} className="chip">
            <span>{g.name}</span>
            <ConfirmButton
              label="Remove"
              ariaLabel={`Remove from ${g.name}`}
              title={`Remove ${user.email} from ${g.name}?`}
              onConfirm={() => remove.mutateAsync(g.id)}
            >
              They stop being a member of this group.
            </ConfirmButton>
          </li>
        ))}
      </ul>
      <Form label="Add to a group" onSubmit={() => add.mutate()} submitLabel="Add to group" busy={add.isPending} error={add.error}>
        <SelectField label="Group" value={groupId} options={options} onChange={setGroupId} required />
      </Form>
    </Section>
  );
}
