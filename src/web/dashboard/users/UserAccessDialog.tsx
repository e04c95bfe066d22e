import { useState } from 'react';
import type { GroupOfUser, User } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { UserGroupsPanel } from './UserGroupsPanel.tsx';
import { UserRolesPanel } from './UserRolesPanel.tsx';

/** Roles and groups of one user, in one dialog; groups only for a caller who may read them (`groups` null otherwise). */
export function UserAccessDialog({ user, groups }: { user: User; groups: GroupOfUser[] | null }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button className="button-small" aria-label={`Roles and groups of ${user.email}`} onClick={() => setOpen(true)}>
        Roles &amp; groups
      </Button>
      <Dialog title={`Roles and groups of ${user.email}`} open={open} onClose={() => setOpen(false)}>
        <UserRolesPanel user={user} />
        {groups ? <UserGroupsPanel user={user} memberOf={groups} /> : null}
      </Dialog>
    </>
  );
}
