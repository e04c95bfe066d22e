import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** A role of a workspace: the four built-in ones are seeded with the workspace; custom ones are added. */
export class Role {
  id!: string;
  workspaceId!: string;
  key!: string;
  name!: string;
  description!: string | null;
  builtin!: boolean;
  permissions!: string[];
  createdAt!: Date;
}

export const RoleSchema = new EntitySchema<Role>({
  class: Role,
  tableName: 'roles',
  filters: tenantFilters,
  uniques: [{ properties: ['workspaceId', 'key'] }],
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    key: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string', nullable: true },
    builtin: { type: 'boolean' },
    permissions: { type: 'json' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

/** A user holds a role, optionally until `expiresAt`. */
export class RoleAssignment {
  id!: string;
  workspaceId!: string;
  userId!: string;
  roleId!: string;
  expiresAt!: Date | null;
  createdAt!: Date;
}

export const RoleAssignmentSchema = new EntitySchema<RoleAssignment>({
  class: RoleAssignment,
  tableName: 'role_assignments',
  filters: tenantFilters,
  uniques: [{ properties: ['userId', 'roleId'] }],
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    roleId: { type: 'string' },
    expiresAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
