import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** A receiver of a workspace's events. */
export class WebhookEndpoint {
  id!: string;
  workspaceId!: string;
  url!: string;
  description!: string | null;
  /** The event types it receives; empty means every type. */
  eventTypes!: string[];
  /** The `whsec_…` signing secret, sealed under the master key; shown once, at creation. */
  secretSealed!: string;
  enabled!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}

export const WebhookEndpointSchema = new EntitySchema<WebhookEndpoint>({
  class: WebhookEndpoint,
  tableName: 'webhook_endpoints',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    url: { type: 'string' },
    description: { type: 'string', nullable: true },
    eventTypes: { type: 'json' },
    secretSealed: { type: 'string', lazy: true },
    enabled: { type: 'boolean' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One event for one endpoint: recorded before it is sent, retried until it succeeds or fails for good. */
export class WebhookDelivery {
  id!: string;
  workspaceId!: string;
  endpointId!: string;
  eventId!: string | null;
  eventType!: string;
  /** The exact JSON body every attempt sends: `{type, timestamp, data}`. */
  payload!: Record<string, unknown>;
  status!: DeliveryStatus;
  /** Every attempt ever made. */
  attempts!: number;
  /** Attempts since the last (re)delivery, which the backoff schedule counts. */
  scheduledAttempts!: number;
  responseStatus!: number | null;
  nextAttemptAt!: Date | null;
  /** While an instance is sending it, no other claims it. */
  leaseUntil!: Date | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export const WebhookDeliverySchema = new EntitySchema<WebhookDelivery>({
  class: WebhookDelivery,
  tableName: 'webhook_deliveries',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    endpointId: { type: 'string' },
    eventId: { type: 'string', nullable: true },
    eventType: { type: 'string' },
    payload: { type: 'json' },
    status: { type: 'string' },
    attempts: { type: 'integer' },
    scheduledAttempts: { type: 'integer' },
    responseStatus: { type: 'integer', nullable: true },
    nextAttemptAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    leaseUntil: { type: 'Date', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

export class WebhookAttempt {
  id!: string;
  workspaceId!: string;
  deliveryId!: string;
  attemptedAt!: Date;
  responseStatus!: number | null;
  durationMs!: number;
  error!: string | null;
}

export const WebhookAttemptSchema = new EntitySchema<WebhookAttempt>({
  class: WebhookAttempt,
  tableName: 'webhook_attempts',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    deliveryId: { type: 'string' },
    attemptedAt: { type: 'Date', columnType: 'timestamptz' },
    responseStatus: { type: 'integer', nullable: true },
    durationMs: { type: 'integer' },
    error: { type: 'string', nullable: true },
  },
});
