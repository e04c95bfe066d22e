import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.ts';
import { OutboxEvent } from './event.entity.ts';

/**
 * The webhook event types this service emits, with the description `GET /api/v1/webhooks/event-types`
 * lists. Names follow CONTRACT.md "Events".
 */
export const EVENT_TYPES = {
  'user.created': 'A user was created (by an admin, an invitation, or social or SSO sign-in)',
  'user.updated': 'A user’s name, status, email verification or metadata changed',
  'user.deleted': 'A user was deleted',
  'user.signed_in': 'A user signed in (a new session started)',
  'session.revoked': 'A session ended by sign-out or revocation',
  'password.reset': 'A password was set with a reset link',
  'password.changed': 'A user changed their password',
  'mfa.factor_enrolled': 'A second factor was verified and is used from now on',
  'mfa.factor_removed': 'A second factor was removed',
  'invitation.created': 'Someone was invited to the workspace',
  'invitation.accepted': 'An invitation was accepted',
  'role.assigned': 'A role was given to a user',
  'role.revoked': 'A role was taken from a user, or a time-bound grant lapsed at its expires_at (reason: expired)',
  'webhook.test': 'A test event sent from the dashboard or the API',
  'access_request.created': 'A user asked for an entitlement',
  'access_request.approved': 'An access request was approved and the access granted',
  'access_request.denied': 'An access request was denied',
  'access_request.cancelled': 'A requester withdrew their pending access request',
  'access_review.started': 'An access review was started',
  'access_review.completed': 'Every item of an access review was decided',
  'organization.created': 'An organization was created',
  'organization.updated': 'An organization’s name, domains or SSO settings changed',
  'organization.deleted': 'An organization was deleted, with its domains and SSO connection',
  'sso_connection.saved': 'An organization’s IT admin saved its SSO connection in the Admin Portal (tested first)',
} as const;

export type EventType = keyof typeof EVENT_TYPES;

/** The part of a request an event needs: the transaction to join and the workspace. */
export interface EventScope {
  em: EntityManager;
  workspaceId: string;
}

/**
 * Adds a domain event to the caller's unit of work, so it commits with the change it describes, or
 * not at all (the outbox pattern: no event without its change, no change without its event). `data`
 * must never hold a secret.
 */
export function emitEvent(scope: EventScope, type: EventType, data: Record<string, unknown>, now = new Date()): OutboxEvent {
  const event = Object.assign(new OutboxEvent(), {
    id: newId('msg'),
    workspaceId: scope.workspaceId,
    type,
    payload: data,
    createdAt: now,
  });
  scope.em.persist(event);
  return event;
}
