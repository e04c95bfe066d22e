import { useCurrentUser } from '../../session/CurrentUser.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { Section } from '../../ui/layout/Section.tsx';

export function ProfileSection() {
  const { user, roles } = useCurrentUser();
  return (
    <Section title="Profile">
      <dl className="facts">
        <dt>Email</dt>
        <dd>{user.email}</dd>
        <dt>Name</dt>
        <dd>{user.name ?? 'Not set'}</dd>
        <dt>Roles</dt>
        <dd>{roles.join(', ')}</dd>
        <dt>Member since</dt>
        <dd>{formatDateTime(user.created_at)}</dd>
      </dl>
    </Section>
  );
}
