import { auditScope } from '../../core/audit-scope.ts';
import type { AppDeps } from '../../core/context.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import type { TargetPolicy } from './sender.ts';
import {
  createdEndpointOutput,
  createEndpointInput,
  deliveryOutput,
  deliveryPage,
  endpointIdInput,
  endpointOutput,
  endpointPage,
  eventTypePage,
  listDeliveriesInput,
  listEndpointsInput,
  listEventTypesInput,
  updateEndpointInput,
} from './webhooks.schema.ts';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  listEventTypes,
  redeliver,
  sendTestEvent,
  updateEndpoint,
} from './webhooks.service.ts';

const tags = ['webhooks'];

export function targetPolicy(deps: AppDeps): TargetPolicy {
  return { allowPrivate: deps.config.ALLOW_PRIVATE_WEBHOOK_TARGETS, httpsOnly: deps.config.NODE_ENV === 'production' };
}

export const webhooksRouter = router({
  list: managementProcedure('webhooks:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/webhooks/', tags, summary: 'List webhook endpoints', protect: true } })
    .input(listEndpointsInput)
    .output(endpointPage)
    .query(({ ctx, input }) => listEndpoints(ctx.em, input)),

  create: managementProcedure('webhooks:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/webhooks/',
        tags,
        summary: 'Add an endpoint (its whsec_ secret is shown once)',
        protect: true,
      },
      successStatus: 201,
      // The URL's host is resolved before the transaction (webhooks.service.ts `createEndpoint`).
      ownTransaction: true,
      audit: 'webhook.create',
    })
    .input(createEndpointInput)
    .output(createdEndpointOutput)
    .mutation(({ ctx, input }) =>
      createEndpoint(ctx.em, (em) => ({ ...auditScope(ctx), em }), ctx.deps.box, targetPolicy(ctx.deps), input, ctx.deps.clock.now()),
    ),

  eventTypes: managementProcedure('webhooks:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/webhooks/event-types', tags, summary: 'List subscribable events', protect: true } })
    .input(listEventTypesInput)
    .output(eventTypePage)
    .query(({ input }) => listEventTypes(input)),

  // After event-types: the REST door takes the first route that matches, and `{id}` would match it.
  get: managementProcedure('webhooks:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/webhooks/{id}', tags, summary: 'Get an endpoint (never its secret)', protect: true } })
    .input(endpointIdInput)
    .output(endpointOutput)
    .query(({ ctx, input }) => getEndpoint(ctx.em, input.id)),

  update: managementProcedure('webhooks:write')
    .meta({
      openapi: { method: 'PATCH', path: '/api/v1/webhooks/{id}', tags, summary: 'Update an endpoint', protect: true },
      // A new URL's host is resolved before the transaction (webhooks.service.ts `updateEndpoint`).
      ownTransaction: true,
      audit: 'webhook.update',
    })
    .input(updateEndpointInput)
    .output(endpointOutput)
    .mutation(({ ctx, input }) =>
      updateEndpoint(ctx.em, (em) => ({ ...auditScope(ctx), em }), targetPolicy(ctx.deps), input, ctx.deps.clock.now()),
    ),

  delete: managementProcedure('webhooks:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/webhooks/{id}', tags, summary: 'Delete an endpoint', protect: true },
      audit: 'webhook.delete',
    })
    .input(endpointIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteEndpoint(auditScope(ctx), input.id)),

  test: managementProcedure('webhooks:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/webhooks/{id}/test', tags, summary: 'Send a test event', protect: true },
      successStatus: 201,
      audit: 'webhook.test',
      conflict: 'The endpoint is disabled',
    })
    .input(endpointIdInput)
    .output(deliveryOutput)
    .mutation(async ({ ctx, input }) => {
      const delivery = await sendTestEvent(auditScope(ctx), input.id, ctx.deps.clock.now());
      ctx.afterCommit.push(() => ctx.deps.webhooks.kick());
      return delivery;
    }),

  deliveries: managementProcedure('webhooks:read')
    .meta({
      openapi: { method: 'GET', path: '/api/v1/webhooks/{id}/deliveries', tags, summary: 'Recent deliveries, newest first', protect: true },
    })
    .input(listDeliveriesInput)
    .output(deliveryPage)
    .query(({ ctx, input }) => listDeliveries(ctx.em, input.id, input)),

  redeliver: managementProcedure('webhooks:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/webhooks/deliveries/{id}/redeliver',
        tags,
        summary: 'Send a delivery again',
        protect: true,
      },
      audit: 'webhook.redeliver',
      conflict: 'The endpoint is disabled, or this delivery is being sent right now',
    })
    .input(endpointIdInput)
    .output(deliveryOutput)
    .mutation(async ({ ctx, input }) => {
      const delivery = await redeliver(auditScope(ctx), input.id, ctx.deps.clock.now());
      ctx.afterCommit.push(() => ctx.deps.webhooks.kick());
      return delivery;
    }),
});
