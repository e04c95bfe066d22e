import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * A domain event waiting in the durable outbox (`events`), written in the transaction of the change it
 * describes. The webhooks module delivers them; until it exists they only accumulate.
 */
export class OutboxEvent {
  id!: string;
  workspaceId!: string;
  type!: string;
  /** The `data` of the Standard Webhooks payload `{type, timestamp, data}`; never a secret. */
  payload!: Record<string, unknown>;
  createdAt!: Date;
}

export const OutboxEventSchema = new EntitySchema<OutboxEvent>({
  class: OutboxEvent,
  tableName: 'events',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    type: { type: 'string' },
    payload: { type: 'json' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
