import type { EntityManager } from '@mikro-orm/postgresql';
import { AuditEvent, type ActorType, type AuditOutcome } from '../modules/audit/audit.entity.ts';
import type { Principal } from './auth.ts';
import { newId } from './ids.ts';

export interface AuditActor {
  type: ActorType;
  id: string | null;
}

/** What an event is about: `{type: 'user', id: 'usr_…'}`. */
export interface AuditTarget {
  type: string;
  id: string;
}

export interface AuditRecord {
  eventType: string;
  outcome?: AuditOutcome;
  target?: AuditTarget;
  details?: Record<string, unknown>;
}

/** The part of a request context an audit row needs. */
export interface AuditScope {
  em: EntityManager;
  workspaceId: string;
  actor: AuditActor;
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

export function actorOf(principal: Principal | undefined): AuditActor {
  if (!principal) return { type: 'system', id: null };
  return { type: principal.type, id: principal.id };
}

/**
 * Adds an audit row to the caller's unit of work, so it commits with the change it describes (or
 * not at all). Never call it on another connection inside a transaction.
 */
export function recordAudit(scope: AuditScope, record: AuditRecord): AuditEvent {
  const event = Object.assign(new AuditEvent(), {
    id: newId('evt'),
    workspaceId: scope.workspaceId,
    eventType: record.eventType,
    outcome: record.outcome ?? 'success',
    actorType: scope.actor.type,
    actorId: scope.actor.id,
    targetType: record.target?.type ?? null,
    targetId: record.target?.id ?? null,
    ip: scope.ip,
    userAgent: scope.userAgent,
    requestId: scope.requestId,
    details: record.details ?? {},
    createdAt: new Date(),
  });
  scope.em.persist(event);
  return event;
}
