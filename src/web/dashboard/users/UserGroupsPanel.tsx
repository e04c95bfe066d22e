import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import type { GroupOfUser, User } from '../../api/types.ts';
import { ConfirmButton } from '../../ui/actions/ConfirmButton.tsx';
import { Form } from '../../ui/forms/Form.tsx';
import { SearchPicker } from '../../ui/forms/SearchPicker.tsx';
import { Section } from '../../ui/layout/Section.tsx';

/**
 * The groups a user belongs to (every one: `groups.ofUsers` answers them all): add them to one, take them
 * out of one. The picker offers the first groups by name, and searches the groups as the person types.
 */
export function UserGroupsPanel({ user, memberOf }: { user: User; memberOf: GroupOfUser[] }) {
  const queryClient = useQueryClient();
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
        <SearchPicker
          label="Group"
          noun={{ one: 'group', many: 'groups' }}
          searchHint="Part of the group's name"
          queryKey={['groups.list', 'picker']}
          search={(query) => api.groups.list.query(query)}
          toOption={(g) => ({ value: g.id, label: g.name })}
          exclude={(g) => memberOf.some((m) => m.id === g.id)}
          none="Choose a group"
          value={groupId}
          onChange={setGroupId}
          required
        />
      </Form>
    </Section>
  );
}
