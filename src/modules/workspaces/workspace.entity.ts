import { EntitySchema } from '@mikro-orm/core';

export class Workspace {
  id!: string;
  name!: string;
  createdAt!: Date;
}

export const WorkspaceSchema = new EntitySchema<Workspace>({
  class: Workspace,
  tableName: 'workspaces',
  properties: {
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
