import { auditScope } from '../../core/audit-scope.ts';
import { authenticatedProcedure, managementProcedure, router, userProcedure } from '../../core/trpc.ts';
import { listEntitlements } from './entitlements.service.ts';
import {
  accessRequestOutput,
  accessRequestPage,
  accessReviewOutput,
  accessReviewPage,
  approveInput,
  cancelInput,
  createRequestInput,
  decidedOutput,
  decideInput,
  denyInput,
  entitlementPage,
  listEntitlementsInput,
  listItemsInput,
  listRequestsInput,
  listReviewsInput,
  requestIdInput,
  reviewIdInput,
  reviewItemPage,
  startReviewInput,
} from './iga.schema.ts';
import {
  approveRequest,
  cancelRequest,
  createRequest,
  denyRequest,
  getRequest,
  listableRequester,
  listRequests,
} from './requests.service.ts';
import { decideItem, getReview, listItems, listReviews, startReview } from './reviews.service.ts';

const tags = ['iga'];

export const igaRouter = router({
  entitlements: managementProcedure('iga:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/iga/entitlements',
        tags,
        summary: 'List entitlements (roles, groups) and who holds them',
        protect: true,
      },
    })
    .input(listEntitlementsInput)
    .output(entitlementPage)
    .query(({ ctx, input }) => listEntitlements(ctx.em, ctx.workspaceId, input, ctx.deps.clock.now())),

  requests: router({
    create: userProcedure
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/requests',
          tags,
          summary: 'Ask for an entitlement, with a justification (a signed-in user, for themself)',
          protect: true,
        },
        successStatus: 201,
        conflict: 'You have this access, or a pending request for it, already',
        bodyIds: ['entitlement_id'],
        audit: 'access_request.create',
      })
      .input(createRequestInput)
      .output(accessRequestOutput)
      .mutation(async ({ ctx, input }) => {
        const request = await createRequest(auditScope(ctx), ctx.userId, input, ctx.deps.clock.now());
        ctx.afterCommit.push(() => ctx.deps.mailer.kick());
        return request;
      }),

    // Every caller: with iga:read, everyone's requests; without, their own (a member follows theirs).
    list: authenticatedProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: '/api/v1/iga/requests',
          tags,
          summary: 'List access requests (filter by status, requester, entitlement); without iga:read, only your own',
          protect: true,
        },
      })
      .input(listRequestsInput)
      .output(accessRequestPage)
      .query(({ ctx, input }) => listRequests(ctx.em, input, listableRequester(ctx.principal))),

    get: authenticatedProcedure
      .meta({
        openapi: {
          method: 'GET',
          path: '/api/v1/iga/requests/{id}',
          tags,
          summary: 'Get an access request; without iga:read, only one of your own',
          protect: true,
        },
      })
      .input(requestIdInput)
      .output(accessRequestOutput)
      .query(({ ctx, input }) => getRequest(ctx.em, input.id, listableRequester(ctx.principal))),

    // The requester withdraws their own pending request; the handler tells theirs from another's.
    cancel: authenticatedProcedure
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/requests/{id}/cancel',
          tags,
          summary: 'Cancel your own pending access request (the requester only; an approver denies instead)',
          protect: true,
        },
        audit: 'access_request.cancel',
        conflict: 'The request is decided or cancelled already',
      })
      .input(cancelInput)
      .output(accessRequestOutput)
      .mutation(({ ctx, input }) => cancelRequest(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),

    approve: managementProcedure('iga:write')
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/requests/{id}/approve',
          tags,
          summary: 'Approve a request: the access is granted in the same transaction, optionally until expires_at',
          protect: true,
        },
        audit: 'access_request.approve',
        conflict: 'The request is decided already, or its role, group or requester is gone',
      })
      .input(approveInput)
      .output(accessRequestOutput)
      .mutation(async ({ ctx, input }) => {
        const request = await approveRequest(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now());
        ctx.afterCommit.push(() => ctx.deps.mailer.kick());
        return request;
      }),

    deny: managementProcedure('iga:write')
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/requests/{id}/deny',
          tags,
          summary: 'Deny a request, with a reason if given',
          protect: true,
        },
        audit: 'access_request.deny',
        conflict: 'The request is decided already',
      })
      .input(denyInput)
      .output(accessRequestOutput)
      .mutation(async ({ ctx, input }) => {
        const request = await denyRequest(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now());
        ctx.afterCommit.push(() => ctx.deps.mailer.kick());
        return request;
      }),
  }),

  reviews: router({
    list: managementProcedure('iga:read')
      .meta({
        openapi: { method: 'GET', path: '/api/v1/iga/reviews', tags, summary: 'List access reviews with their progress', protect: true },
      })
      .input(listReviewsInput)
      .output(accessReviewPage)
      .query(({ ctx, input }) => listReviews(ctx.em, input)),

    start: managementProcedure('iga:write')
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/reviews',
          tags,
          summary: 'Start a review over a role, a group or everyone: one item per current grant',
          protect: true,
        },
        successStatus: 201,
        audit: 'access_review.start',
        bodyIds: ['role_id', 'group_id', 'entitlement_id'],
      })
      .input(startReviewInput)
      .output(accessReviewOutput)
      .mutation(({ ctx, input }) => startReview(auditScope(ctx), input, ctx.deps.clock.now())),

    get: managementProcedure('iga:read')
      .meta({
        openapi: { method: 'GET', path: '/api/v1/iga/reviews/{id}', tags, summary: 'Get an access review and its progress', protect: true },
      })
      .input(reviewIdInput)
      .output(accessReviewOutput)
      .query(({ ctx, input }) => getReview(ctx.em, input.id)),

    items: managementProcedure('iga:read')
      .meta({
        openapi: {
          method: 'GET',
          path: '/api/v1/iga/reviews/{id}/items',
          tags,
          summary: 'Items of a review (filter decision: pending, keep, revoke)',
          protect: true,
        },
      })
      .input(listItemsInput)
      .output(reviewItemPage)
      .query(({ ctx, input }) => listItems(ctx.em, input)),

    decide: managementProcedure('iga:write')
      .meta({
        openapi: {
          method: 'POST',
          path: '/api/v1/iga/reviews/{id}/items/{item_id}/decide',
          tags,
          summary: 'Keep or revoke one item; revoke removes the access at once; the last decision completes the review',
          protect: true,
        },
        audit: 'access_review.decide',
        conflict: 'The item is decided already',
      })
      .input(decideInput)
      .output(decidedOutput)
      .mutation(({ ctx, input }) => decideItem(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),
  }),
});
