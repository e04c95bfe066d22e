import type { User, UserRelations } from '../../api/types.ts';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { UserAccessDialog } from './UserAccessDialog.tsx';
import { UserStatusActions } from './UserStatusActions.tsx';

const STATUS_TONE = { active: 'good', deactivated: 'bad', locked: 'warn' } as const;

interface UsersTableProps {
  users: User[];
  relations: Map<string, UserRelations>;
  canWrite: boolean;
}

export function UsersTable({ users, relations, canWrite }: UsersTableProps) {
  return (
    <table className="table">
      <caption className="visually-hidden">Users</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Roles</th>
          <th scope="col">Groups</th>
          <th scope="col">Two-factor</th>
          <th scope="col">Last sign-in</th>
          {canWrite ? (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {users.map((u) => {
          const r = relations.get(u.id);
          return (
            <tr key={u.id}>
              <th scope="row">{u.email}</th>
              <td>{u.name ?? '—'}</td>
              <td>
                <StatusBadge status={u.status} tone={STATUS_TONE[u.status]} />
              </td>
              <td>{r ? r.roles.map((a) => a.role.name).join(', ') || '—' : '…'}</td>
              <td>{r ? r.groups.map((g) => g.name).join(', ') || '—' : '…'}</td>
              <td>{u.mfa_enabled ? 'On' : 'Off'}</td>
              <td>{formatDateTime(u.last_sign_in_at)}</td>
              {canWrite ? (
                <td className="actions">
                  <UserAccessDialog user={u} relations={r} />
                  <UserStatusActions user={u} />
                </td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
