/** Permissions are `resource:read` / `resource:write`, plus `vault:reveal`; `*` grants everything. */
export const RESOURCES = [
  'users',
  'roles',
  'groups',
  'organizations',
  'applications',
  'iga',
  'audit',
  'threat',
  'vault',
  'branding',
  'domains',
  'email_templates',
  'webhooks',
  'actions',
  'api_keys',
] as const;

export type Resource = (typeof RESOURCES)[number];
export type Permission = `${Resource}:${'read' | 'write'}` | 'vault:reveal';
export type Grant = Permission | '*';

export const ALL_PERMISSIONS: Permission[] = [...RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as Permission[]), 'vault:reveal'];

export const READ_PERMISSIONS: Permission[] = RESOURCES.map((r) => `${r}:read` as Permission);

export function isPermission(value: string): value is Permission {
  return (ALL_PERMISSIONS as string[]).includes(value);
}

export function grants(held: Iterable<Grant>, wanted: Permission): boolean {
  for (const grant of held) if (grant === '*' || grant === wanted) return true;
  return false;
}

/** Whether `held` grants every permission there is (what `*` grants, spelled out or not). */
export function grantsAll(held: Iterable<Grant>): boolean {
  const list = [...held];
  return ALL_PERMISSIONS.every((p) => grants(list, p));
}
