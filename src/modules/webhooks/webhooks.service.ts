import { LockMode } from '@mikro-orm/core';
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { differs } from '../../core/patch.ts';
import { isNonPublicAddress } from '../../core/public-address.ts';
import { EVENT_TYPES } from '../events/events.ts';
import { targetProblem, type TargetPolicy } from './sender.ts';
import { WebhookAttempt, WebhookDelivery, WebhookEndpoint, type DeliveryStatus } from './webhook.entity.ts';
import type { CreateEndpointInput, DeliveryView, EndpointView, UpdateEndpointInput } from './webhooks.schema.ts';

/** The subscribable events, a page at a time, in the order EVENT_TYPES declares them. */
export function listEventTypes(query: PageQuery) {
  const all = Object.entries(EVENT_TYPES).map(([type, description]) => ({ type, description }));
  const { limit, offset } = offsetOf(query);
  return toPage(all.slice(offset, offset + limit), all.length, query);
}

function toView(endpoint: WebhookEndpoint): EndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    event_types: endpoint.eventTypes,
    enabled: endpoint.enabled,
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

function invalid(path: string, message: string): AppError {
  return new AppError('BAD_REQUEST', `The webhook ${path} ${message}`, { details: [{ path, message }] });
}

/** Refused when saved: a bad URL, or a host that is or resolves to a loopback/private/metadata address. */
async function checkTarget(url: string, policy: TargetPolicy): Promise<void> {
  const problem = targetProblem(url, policy);
  if (problem) throw invalid('url', problem);
  if (policy.allowPrivate) return;
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw invalid('url', 'has a host name that does not resolve');
  }
  if (addresses.some((a) => isNonPublicAddress(a.address))) {
    throw invalid('url', 'must not point to a loopback, private, link-local or metadata address');
  }
}

function checkEventTypes(types: string[]): string[] {
  const unknown = types.filter((t) => !(t in EVENT_TYPES));
  if (unknown.length > 0) throw invalid('event_types', `holds unknown types: ${unknown.join(', ')} (see GET /api/v1/webhooks/event-types)`);
  return [...new Set(types)];
}

/**
 * The URL is checked (its host resolved) before any transaction opens, so a slow DNS answer holds no
 * database connection: on the embedded database, which has one, it held every other request.
 */
export async function createEndpoint(
  em: EntityManager,
  makeScope: (em: EntityManager) => AuditScope,
  box: CryptoBox,
  policy: TargetPolicy,
  input: CreateEndpointInput,
  now: Date,
) {
  await checkTarget(input.url, policy);
  const eventTypes = checkEventTypes(input.event_types);
  return em.transactional(async (tx) => saveEndpoint(makeScope(tx), box, input, eventTypes, now));
}

async function saveEndpoint(scope: AuditScope, box: CryptoBox, input: CreateEndpointInput, eventTypes: string[], now: Date) {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const endpoint = Object.assign(new WebhookEndpoint(), {
    id: newId('whk'),
    workspaceId: scope.workspaceId,
    url: input.url,
    description: input.description ?? null,
    eventTypes,
    secretSealed: box.seal(secret),
    enabled: input.enabled,
    createdAt: now,
    updatedAt: now,
  });
  scope.em.persist(endpoint);
  recordAudit(scope, {
    eventType: 'webhook.create',
    target: { type: 'webhook', id: endpoint.id },
    details: { url: endpoint.url, event_types: endpoint.eventTypes },
  });
  return { ...toView(endpoint), secret };
}

export async function listEndpoints(em: EntityManager, query: PageQuery) {
  const [rows, total] = await em.findAndCount(WebhookEndpoint, {}, { orderBy: { createdAt: 'desc', id: 'desc' }, ...offsetOf(query) });
  return toPage(rows.map(toView), total, query);
}

/** `lock`: read FOR UPDATE, so of two deletes at once the later one waits and finds nothing (404). */
async function findEndpoint(em: EntityManager, id: string, lock = false): Promise<WebhookEndpoint> {
  const endpoint = isId('whk', id) ? await em.findOne(WebhookEndpoint, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) : null;
  if (!endpoint) throw new AppError('NOT_FOUND', 'No such webhook endpoint');
  return endpoint;
}

/** One endpoint as listed: never its secret. */
export async function getEndpoint(em: EntityManager, id: string): Promise<EndpointView> {
  return toView(await findEndpoint(em, id));
}

/**
 * A new URL is checked before any transaction opens, as on create. Should another update change the
 * URL in between, the one sent is checked again inside (rare: it then waits for DNS there).
 */
export async function updateEndpoint(
  em: EntityManager,
  makeScope: (em: EntityManager) => AuditScope,
  policy: TargetPolicy,
  input: UpdateEndpointInput,
  now: Date,
): Promise<EndpointView> {
  const before = await findEndpoint(em.fork(), input.id);
  const eventTypes = input.event_types === undefined ? undefined : checkEventTypes(input.event_types);
  let checkedUrl: string | undefined;
  if (differs(input.url, before.url)) {
    await checkTarget(input.url, policy);
    checkedUrl = input.url;
  }
  return em.transactional((tx) => applyUpdate(makeScope(tx), policy, input, eventTypes, checkedUrl, now));
}

async function applyUpdate(
  scope: AuditScope,
  policy: TargetPolicy,
  input: UpdateEndpointInput,
  eventTypes: string[] | undefined,
  checkedUrl: string | undefined,
  now: Date,
): Promise<EndpointView> {
  const endpoint = await findEndpoint(scope.em, input.id);
  const changed: string[] = [];
  if (differs(input.url, endpoint.url)) {
    if (input.url !== checkedUrl) await checkTarget(input.url, policy);
    endpoint.url = input.url;
    changed.push('url');
  }
  if (differs(input.description, endpoint.description)) {
    endpoint.description = input.description;
    changed.push('description');
  }
  if (differs(eventTypes, endpoint.eventTypes)) {
    endpoint.eventTypes = eventTypes;
    changed.push('event_types');
  }
  if (differs(input.enabled, endpoint.enabled)) {
    endpoint.enabled = input.enabled;
    changed.push('enabled');
  }
  // Nothing sent differs from what is stored: nothing is written (core/patch.ts).
  if (changed.length === 0) return toView(endpoint);
  endpoint.updatedAt = now;
  recordAudit(scope, {
    eventType: 'webhook.update',
    target: { type: 'webhook', id: endpoint.id },
    details: { url: endpoint.url, event_types: endpoint.eventTypes, enabled: endpoint.enabled, changed },
  });
  return toView(endpoint);
}

export async function deleteEndpoint(scope: AuditScope, id: string) {
  const endpoint = await findEndpoint(scope.em, id, true);
  scope.em.remove(endpoint);
  recordAudit(scope, { eventType: 'webhook.delete', target: { type: 'webhook', id: endpoint.id }, details: { url: endpoint.url } });
  return { id: endpoint.id, deleted: true as const };
}

async function deliveryViews(em: EntityManager, deliveries: WebhookDelivery[]): Promise<DeliveryView[]> {
  const attempts = deliveries.length
    ? await em.find(WebhookAttempt, { deliveryId: { $in: deliveries.map((d) => d.id) } }, { orderBy: { attemptedAt: 'desc', id: 'desc' } })
    : [];
  return deliveries.map((d) => ({
    id: d.id,
    endpoint_id: d.endpointId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    response_status: d.responseStatus,
    created_at: d.createdAt.toISOString(),
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    last_attempts: attempts
      .filter((a) => a.deliveryId === d.id)
      .slice(0, 5)
      .map((a) => ({
        attempted_at: a.attemptedAt.toISOString(),
        response_status: a.responseStatus,
        duration_ms: a.durationMs,
        error: a.error,
      })),
  }));
}

/**
 * The dispatcher sends nothing to a disabled endpoint, so a test event or a redelivery asked of one
 * would wait, unsaid, until it is enabled: it is refused instead, and nothing is written.
 */
function requireEnabled(endpoint: WebhookEndpoint): void {
  if (!endpoint.enabled) {
    throw new AppError('CONFLICT', `The endpoint ${endpoint.id} is disabled; enable it first (PATCH it with "enabled": true)`);
  }
}

/** `POST /webhooks/{id}/test`: a `webhook.test` delivery to this endpoint, sent like any other. */
export async function sendTestEvent(scope: AuditScope, id: string, now: Date): Promise<DeliveryView> {
  const endpoint = await findEndpoint(scope.em, id);
  requireEnabled(endpoint);
  const delivery = Object.assign(new WebhookDelivery(), {
    id: newId('dlv'),
    workspaceId: scope.workspaceId,
    endpointId: endpoint.id,
    eventId: null,
    eventType: 'webhook.test',
    payload: { type: 'webhook.test', timestamp: now.toISOString(), data: { endpoint_id: endpoint.id, message: 'This is a test event.' } },
    status: 'pending' as DeliveryStatus,
    attempts: 0,
    scheduledAttempts: 0,
    responseStatus: null,
    nextAttemptAt: now,
    leaseUntil: null,
    createdAt: now,
    updatedAt: now,
  });
  scope.em.persist(delivery);
  recordAudit(scope, { eventType: 'webhook.test', target: { type: 'webhook', id: endpoint.id }, details: { delivery_id: delivery.id } });
  return (await deliveryViews(scope.em, [delivery]))[0] as DeliveryView;
}

export async function listDeliveries(em: EntityManager, id: string, query: PageQuery & { status?: DeliveryStatus }) {
  const endpoint = await findEndpoint(em, id);
  const where = { endpointId: endpoint.id, ...(query.status ? { status: query.status } : {}) };
  const [rows, total] = await em.findAndCount(WebhookDelivery, where, { orderBy: { createdAt: 'desc', id: 'desc' }, ...offsetOf(query) });
  return toPage(await deliveryViews(em, rows), total, query);
}

/**
 * Sends a delivery again, as soon as possible, with its original `webhook-id`; a new backoff schedule.
 * Refused (409) while the endpoint is disabled, and while an attempt of this delivery is in flight (its
 * lease runs): clearing the lease then let the dispatcher send it a second time at once, and the first
 * attempt's outcome overwrote the new schedule. The row is read FOR UPDATE: a claim that leased it
 * first is seen here, and a claim after this waits (skips it) until the redelivery is committed.
 */
export async function redeliver(scope: AuditScope, id: string, now: Date): Promise<DeliveryView> {
  const delivery = isId('dlv', id) ? await scope.em.findOne(WebhookDelivery, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
  if (!delivery) throw new AppError('NOT_FOUND', 'No such delivery');
  requireEnabled(await findEndpoint(scope.em, delivery.endpointId));
  if (delivery.leaseUntil && delivery.leaseUntil > now) {
    throw new AppError('CONFLICT', 'This delivery is being sent right now; redeliver it once that attempt has ended (seconds at most)');
  }
  Object.assign(delivery, { status: 'pending', scheduledAttempts: 0, nextAttemptAt: now, leaseUntil: null, updatedAt: now });
  recordAudit(scope, {
    eventType: 'webhook.redeliver',
    target: { type: 'webhook_delivery', id: delivery.id },
    details: { endpoint_id: delivery.endpointId },
  });
  return (await deliveryViews(scope.em, [delivery]))[0] as DeliveryView;
}
