import { useState } from 'react';
import type { User, UserRelations } from '../../api/types.ts';
import { Button } from '../../ui/actions/Button.tsx';
import { Dialog } from '../../ui/overlay/Dialog.tsx';
import { UserGroupsPanel } from './UserGroupsPanel.tsx';
import { UserRolesPanel } from './UserRolesPanel.tsx';

/** Roles and groups of one user, in one dialog. */
export function UserAccessDialog({ user, relations }: { user: User; relations: UserRelations | undefined }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button className="button-small" aria-label={`Roles and groups of ${user.email}`} onClick={() => setOpen(true)}>
        Roles &amp; groups
      </Button>
      <Dialog title={`Roles and groups of ${user.email}`} open={open} onClose={() => setOpen(false)}>
        <UserRolesPanel user={user} />
        <UserGroupsPanel user={user} relations={relations} />
      </Dialog>
    </>
  );
}
