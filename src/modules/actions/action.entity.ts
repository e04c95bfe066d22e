import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const ACTION_TRIGGERS = ['post-login'] as const;
export type ActionTrigger = (typeof ACTION_TRIGGERS)[number];

export const ACTION_STATUSES = ['draft', 'deployed'] as const;
export type ActionStatus = (typeof ACTION_STATUSES)[number];

/**
 * A code hook of a workspace. `code` is what was last saved; `deployedCode` is what sign-ins run.
 * Saving new code makes the action a `draft` while the deployed version keeps running, until the
 * next deploy replaces it (so editing a step-up action never switches it off on the way).
 */
export class Action {
  id!: string;
  workspaceId!: string;
  name!: string;
  trigger!: ActionTrigger;
  code!: string;
  status!: ActionStatus;
  deployedCode!: string | null;
  /** 1 on the first deploy, one more on each later one; null until deployed. */
  deployedVersion!: number | null;
  deployedAt!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export const ActionSchema = new EntitySchema<Action>({
  class: Action,
  tableName: 'actions',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    trigger: { type: 'string' },
    code: { type: 'text' },
    status: { type: 'string' },
    deployedCode: { type: 'text', nullable: true, lazy: true },
    deployedVersion: { type: 'integer', nullable: true },
    deployedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
