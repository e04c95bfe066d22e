import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export type AuditOutcome = 'success' | 'failure';
export type ActorType = 'user' | 'api_key' | 'system';

/** One append-only audit record; written in the same transaction as the change it describes. */
export class AuditEvent {
  id!: string;
  workspaceId!: string;
  eventType!: string;
  outcome!: AuditOutcome;
  actorType!: ActorType;
  actorId!: string | null;
  targetType!: string | null;
  targetId!: string | null;
  ip!: string | null;
  userAgent!: string | null;
  requestId!: string | null;
  details!: Record<string, unknown>;
  createdAt!: Date;
}

export const AuditEventSchema = new EntitySchema<AuditEvent>({
  class: AuditEvent,
  tableName: 'audit_events',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    eventType: { type: 'string' },
    outcome: { type: 'string' },
    actorType: { type: 'string' },
    actorId: { type: 'string', nullable: true },
    targetType: { type: 'string', nullable: true },
    targetId: { type: 'string', nullable: true },
    ip: { type: 'string', nullable: true },
    userAgent: { type: 'string', nullable: true },
    requestId: { type: 'string', nullable: true },
    details: { type: 'json' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
