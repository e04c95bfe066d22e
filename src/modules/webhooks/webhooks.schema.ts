import { z } from 'zod';
import { aliasOf, withAliases } from '../../core/aliases.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { DELIVERY_STATUSES } from './webhook.entity.ts';

const eventTypes = z.array(z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'must be an event type such as user.created')).max(100);

/** Logto and WorkOS call the subscribed event types `events`. */
const events = eventTypes.optional().describe(aliasOf('event_types', "Logto's and WorkOS's name"));

export const createEndpointInput = withAliases(
  z.strictObject({
    url: z.string().trim().max(2000),
    description: absentIfNull(z.string().trim().max(500)),
    /** Empty or absent: every event type. */
    event_types: eventTypes.default([]),
    events,
    enabled: z.boolean().default(true),
  }),
  { events: 'event_types' },
);
export type CreateEndpointInput = z.infer<typeof createEndpointInput>;

export const updateEndpointInput = withAliases(
  z.strictObject({
    id: z.string().max(100),
    url: z.string().trim().max(2000).optional(),
    description: z.string().trim().max(500).nullable().optional(),
    event_types: eventTypes.optional(),
    events,
    enabled: z.boolean().optional(),
  }),
  { events: 'event_types' },
);
export type UpdateEndpointInput = z.infer<typeof updateEndpointInput>;

export const endpointIdInput = z.object({ id: z.string().max(100) });
export const listEndpointsInput = z.object({ ...pageParams }).prefault({});
export const listDeliveriesInput = z
  .object({ id: z.string().max(100), status: z.enum(DELIVERY_STATUSES).optional(), ...pageParams })
  .prefault({ id: '' });

export const endpointOutput = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(z.string()),
    enabled: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type EndpointView = z.infer<typeof endpointOutput>;
export const endpointPage = pageOf(endpointOutput);
export const createdEndpointOutput = endpointOutput
  .extend({ secret: z.string().describe('The whsec_ signing secret: shown once, now') })
  .meta({ id: 'CreatedWebhookEndpoint' });

export const deliveryOutput = z
  .object({
    id: z.string(),
    endpoint_id: z.string(),
    event_type: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    response_status: z.number().int().nullable(),
    created_at: z.string(),
    next_attempt_at: z.string().nullable(),
    last_attempts: z.array(
      z.object({
        attempted_at: z.string(),
        response_status: z.number().int().nullable(),
        duration_ms: z.number().int(),
        error: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryView = z.infer<typeof deliveryOutput>;
export const deliveryPage = pageOf(deliveryOutput);

export const eventTypeOutput = z.object({ type: z.string(), description: z.string() }).meta({ id: 'WebhookEventType' });
export const eventTypePage = pageOf(eventTypeOutput);
export const listEventTypesInput = z.object({ ...pageParams }).prefault({});
