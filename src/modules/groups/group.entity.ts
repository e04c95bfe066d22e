import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** A named set of users of a workspace. Groups carry no roles (docs/decisions.md). */
export class Group {
  id!: string;
  workspaceId!: string;
  name!: string;
  description!: string | null;
  createdAt!: Date;
}

export const GroupSchema = new EntitySchema<Group>({
  class: Group,
  tableName: 'groups',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

export class GroupMember {
  id!: string;
  workspaceId!: string;
  groupId!: string;
  userId!: string;
  createdAt!: Date;
}

export const GroupMemberSchema = new EntitySchema<GroupMember>({
  class: GroupMember,
  tableName: 'group_members',
  filters: tenantFilters,
  uniques: [{ properties: ['groupId', 'userId'] }],
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    groupId: { type: 'string' },
    userId: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
