import { RESOURCES } from '../../../core/permissions.ts';
import type { Permission } from '../../api/types.ts';
import { FieldError, useFieldProblem } from '../../ui/forms/field-problems.tsx';

const LABELS: Record<(typeof RESOURCES)[number], string> = {
  users: 'Users',
  roles: 'Roles',
  groups: 'Groups',
  organizations: 'Organizations and SSO',
  applications: 'Applications',
  iga: 'Access governance',
  audit: 'Audit log',
  threat: 'Threat detection',
  vault: 'Vault',
  branding: 'Branding',
  domains: 'Custom domains',
  email_templates: 'Email templates',
  webhooks: 'Webhooks',
  actions: 'Actions',
  api_keys: 'API keys',
};

interface PermissionPickerProps {
  value: Permission[];
  onChange(value: Permission[]): void;
}

/** Read and write per resource, as a grid of checkboxes (a table, so each box is named by its row and column). */
export function PermissionPicker({ value, onChange }: PermissionPickerProps) {
  const problem = useFieldProblem('permissions');
  const toggle = (permission: Permission, on: boolean) => onChange(on ? [...value, permission] : value.filter((p) => p !== permission));
  const box = (permission: Permission, label: string) => (
    <input
      type="checkbox"
      aria-label={label}
      checked={value.includes(permission)}
      onChange={(event) => toggle(permission, event.target.checked)}
    />
  );
  return (
    <fieldset className="permission-picker" aria-describedby={problem ? 'permissions-error' : undefined}>
      <legend>Permissions</legend>
      <FieldError id="permissions-error" problem={problem} />
      <table className="table table-compact">
        <thead>
          <tr>
            <th scope="col">Resource</th>
            <th scope="col">Read</th>
            <th scope="col">Write</th>
          </tr>
        </thead>
        <tbody>
          {RESOURCES.map((resource) => (
            <tr key={resource}>
              <th scope="row">{LABELS[resource]}</th>
              <td>{box(`${resource}:read`, `${LABELS[resource]}: read`)}</td>
              <td>{box(`${resource}:write`, `${LABELS[resource]}: write`)}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">Vault: reveal values</th>
            <td colSpan={2}>{box('vault:reveal', 'Vault: reveal values')}</td>
          </tr>
        </tbody>
      </table>
    </fieldset>
  );
}
