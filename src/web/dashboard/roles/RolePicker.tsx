import { api } from '../../api/client.ts';
import type { Role } from '../../api/types.ts';
import { SearchPicker } from '../../ui/forms/SearchPicker.tsx';

interface RolePickerProps {
  /** Roles not to offer (the member role, or the ones the user holds). */
  exclude(role: Role): boolean;
  /** The first option, chosen when no role is. */
  none: string;
  value: string;
  onChange(roleId: string): void;
  required?: boolean;
  enabled?: boolean;
}

/** A role of the workspace, found by searching its name or description (`roles.list` with `q`). */
export function RolePicker({ exclude, none, value, onChange, required, enabled }: RolePickerProps) {
  return (
    <SearchPicker
      label="Role"
      name="role_id"
      noun={{ one: 'role', many: 'roles' }}
      searchHint="Part of the role's name or description"
      queryKey={['roles.list', 'picker']}
      search={(query) => api.roles.list.query(query)}
      toOption={(r: Role) => ({ value: r.id, label: r.name })}
      exclude={exclude}
      none={none}
      value={value}
      onChange={onChange}
      required={required}
      enabled={enabled}
    />
  );
}
