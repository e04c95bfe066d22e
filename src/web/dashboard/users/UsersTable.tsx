import type { GroupOfUser, User, UserRelations } from '../../api/types.ts';
import { DataTable } from '../../ui/data/DataTable.tsx';
import { StatusBadge } from '../../ui/data/StatusBadge.tsx';
import { formatDateTime } from '../../ui/data/format.ts';
import { UserAccessDialog } from './UserAccessDialog.tsx';
import { UserStatusActions } from './UserStatusActions.tsx';

const STATUS_TONE = { active: 'good', deactivated: 'bad', locked: 'warn' } as const;

interface UsersTableProps {
  users: User[];
  relations: Map<string, UserRelations>;
  /** Each user's groups; null when the caller may not read groups (no Groups column then). */
  groups: Map<string, GroupOfUser[]> | null;
  canWrite: boolean;
}

export function UsersTable({ users, relations, groups, canWrite }: UsersTableProps) {
  /** A user's roles or groups, `…` while they load. */
  const related = (u: User, names: (r: UserRelations) => string[]) => {
    const r = relations.get(u.id);
    return r ? names(r).join(', ') || '—' : '…';
  };
  const groupNames = (u: User) => {
    const memberOf = groups?.get(u.id);
    return memberOf ? memberOf.map((g) => g.name).join(', ') || '—' : '…';
  };
  return (
    <DataTable
      caption="Users"
      rows={users}
      columns={[
        { header: 'Email', rowHeader: true, cell: (u) => u.email },
        { header: 'Name', cell: (u) => u.name ?? '—' },
        { header: 'Status', cell: (u) => <StatusBadge status={u.status} tone={STATUS_TONE[u.status]} /> },
        { header: 'Roles', cell: (u) => related(u, (r) => r.roles.map((a) => a.role.name)) },
        ...(groups ? [{ header: 'Groups', cell: groupNames }] : []),
        { header: 'Two-factor', cell: (u) => (u.mfa_enabled ? 'On' : 'Off') },
        { header: 'Last sign-in', cell: (u) => formatDateTime(u.last_sign_in_at) },
      ]}
      actions={
        canWrite
          ? {
              cell: (u) => (
                <>
                  <UserAccessDialog user={u} groups={groups ? (groups.get(u.id) ?? []) : null} />
                  <UserStatusActions user={u} />
                </>
              ),
            }
          : null
      }
    />
  );
}
