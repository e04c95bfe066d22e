import type { ReactNode } from 'react';
import type { Permission } from '../../api/types.ts';
import { useCan } from '../../session/CurrentUser.tsx';
import { PageHeader } from '../../ui/layout/PageHeader.tsx';

/** A screen the person's roles do not open says so instead of failing call by call. */
export function RequirePermission({ permission, children }: { permission: Permission; children: ReactNode }) {
  const can = useCan();
  if (can(permission)) return <>{children}</>;
  return (
    <>
      <PageHeader title="Not available" />
      <p>
        This screen needs the <code>{permission}</code> permission. Ask an owner or an administrator of the workspace if you need it.
      </p>
    </>
  );
}
