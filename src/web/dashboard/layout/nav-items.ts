import type { Permission } from '../../api/types.ts';

export interface NavItem {
  to: string;
  label: string;
  /** Shown only to people whose roles grant this; every signed-in person has their own account. */
  permission?: Permission;
}

export const NAV_ITEMS: NavItem[] = [
  { to: '/dashboard/account', label: 'Account & security' },
  { to: '/dashboard/users', label: 'Users', permission: 'users:read' },
  { to: '/dashboard/invitations', label: 'Invitations', permission: 'users:read' },
  { to: '/dashboard/roles', label: 'Roles', permission: 'roles:read' },
  { to: '/dashboard/groups', label: 'Groups', permission: 'groups:read' },
  { to: '/dashboard/organizations', label: 'Organizations', permission: 'organizations:read' },
  { to: '/dashboard/applications', label: 'Applications', permission: 'applications:read' },
  { to: '/dashboard/api-keys', label: 'API keys', permission: 'api_keys:read' },
  { to: '/dashboard/webhooks', label: 'Webhooks', permission: 'webhooks:read' },
  { to: '/dashboard/actions', label: 'Actions', permission: 'actions:read' },
  { to: '/dashboard/audit', label: 'Audit log', permission: 'audit:read' },
];
