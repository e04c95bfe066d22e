import { builder, PageMetaRef } from '../../graphql/builder.ts';
import { DECISIONS, ENTITLEMENT_TYPES, REQUEST_STATUSES, REVIEW_SCOPES, REVIEW_STATUSES } from './iga.entity.ts';
import { ITEM_STATES, type AccessRequestView, type AccessReviewView, type ReviewItemView } from './iga.schema.ts';

type Page<T> = { data: T[]; meta: { total: number; page: number; per_page: number } };

const RequestStatusRef = builder.enumType('AccessRequestStatus', { values: REQUEST_STATUSES });
const ReviewStatusRef = builder.enumType('AccessReviewStatus', { values: REVIEW_STATUSES });
const ReviewScopeRef = builder.enumType('AccessReviewScope', { values: REVIEW_SCOPES });
const EntitlementTypeRef = builder.enumType('EntitlementType', { values: ENTITLEMENT_TYPES });
const DecisionRef = builder.enumType('AccessReviewDecision', { values: DECISIONS });
const ItemStateRef = builder.enumType('AccessReviewItemState', { values: ITEM_STATES });

const ActorRef = builder.objectRef<{ type: string; id: string | null }>('GovernanceActor').implement({
  fields: (t) => ({ type: t.exposeString('type'), id: t.exposeString('id', { nullable: true }) }),
});

const EntitlementRefRef = builder.objectRef<AccessRequestView['entitlement']>('EntitlementRef').implement({
  fields: (t) => ({
    type: t.field({ type: EntitlementTypeRef, resolve: (e) => e.type }),
    id: t.exposeID('id'),
    name: t.exposeString('name'),
  }),
});

const PersonRef = builder.objectRef<{ id: string; email: string }>('GovernancePerson').implement({
  fields: (t) => ({ id: t.exposeID('id'), email: t.exposeString('email') }),
});

const AccessRequestRef = builder.objectRef<AccessRequestView>('AccessRequest').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    requester: t.field({ type: PersonRef, resolve: (r) => r.requester }),
    entitlement: t.field({ type: EntitlementRefRef, resolve: (r) => r.entitlement }),
    justification: t.exposeString('justification', { nullable: true }),
    status: t.field({ type: RequestStatusRef, resolve: (r) => r.status }),
    createdAt: t.exposeString('created_at'),
    decidedAt: t.exposeString('decided_at', { nullable: true }),
    decidedBy: t.field({ type: ActorRef, nullable: true, resolve: (r) => r.decided_by }),
    decisionReason: t.exposeString('decision_reason', { nullable: true }),
    expiresAt: t.exposeString('expires_at', { nullable: true }),
  }),
});

const ProgressRef = builder.objectRef<AccessReviewView['progress']>('AccessReviewProgress').implement({
  description: 'How far a review is: items decided out of all, kept and revoked.',
  fields: (t) => ({
    total: t.exposeInt('total'),
    decided: t.exposeInt('decided'),
    kept: t.exposeInt('kept'),
    revoked: t.exposeInt('revoked'),
    percent: t.exposeInt('percent'),
  }),
});

const ReviewScopeObjectRef = builder.objectRef<AccessReviewView['scope']>('AccessReviewScopeInfo').implement({
  fields: (t) => ({
    type: t.field({ type: ReviewScopeRef, resolve: (s) => s.type }),
    id: t.exposeString('id', { nullable: true }),
    name: t.exposeString('name', { nullable: true }),
  }),
});

const AccessReviewRef = builder.objectRef<AccessReviewView>('AccessReview').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    scope: t.field({ type: ReviewScopeObjectRef, resolve: (r) => r.scope }),
    status: t.field({ type: ReviewStatusRef, resolve: (r) => r.status }),
    progress: t.field({ type: ProgressRef, resolve: (r) => r.progress }),
    createdBy: t.field({ type: ActorRef, resolve: (r) => r.created_by }),
    createdAt: t.exposeString('created_at'),
    dueAt: t.exposeString('due_at', { nullable: true }),
    completedAt: t.exposeString('completed_at', { nullable: true }),
  }),
});

const ReviewItemRef = builder.objectRef<ReviewItemView>('AccessReviewItem').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    reviewId: t.exposeString('review_id'),
    user: t.field({ type: PersonRef, resolve: (i) => i.user }),
    entitlement: t.field({ type: EntitlementRefRef, resolve: (i) => i.entitlement }),
    grantExpiresAt: t.exposeString('grant_expires_at', { nullable: true }),
    decision: t.field({ type: DecisionRef, nullable: true, resolve: (i) => i.decision }),
    decidedBy: t.field({ type: ActorRef, nullable: true, resolve: (i) => i.decided_by }),
    decidedAt: t.exposeString('decided_at', { nullable: true }),
    comment: t.exposeString('comment', { nullable: true }),
  }),
});

const AccessRequestPageRef = builder.objectRef<Page<AccessRequestView>>('AccessRequestPage').implement({
  fields: (t) => ({
    data: t.field({ type: [AccessRequestRef], resolve: (p) => p.data }),
    meta: t.field({ type: PageMetaRef, resolve: (p) => p.meta }),
  }),
});

const AccessReviewPageRef = builder.objectRef<Page<AccessReviewView>>('AccessReviewPage').implement({
  fields: (t) => ({
    data: t.field({ type: [AccessReviewRef], resolve: (p) => p.data }),
    meta: t.field({ type: PageMetaRef, resolve: (p) => p.meta }),
  }),
});

const ReviewItemPageRef = builder.objectRef<Page<ReviewItemView>>('AccessReviewItemPage').implement({
  fields: (t) => ({
    data: t.field({ type: [ReviewItemRef], resolve: (p) => p.data }),
    meta: t.field({ type: PageMetaRef, resolve: (p) => p.meta }),
  }),
});

builder.queryFields((t) => ({
  accessRequests: t.field({
    type: AccessRequestPageRef,
    description: 'Access requests, newest first.',
    args: { status: t.arg({ type: RequestStatusRef }), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.iga.requests.list({ status: args.status ?? undefined, page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
  accessReviews: t.field({
    type: AccessReviewPageRef,
    description: 'Access reviews with their progress, newest first.',
    args: { status: t.arg({ type: ReviewStatusRef }), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.iga.reviews.list({ status: args.status ?? undefined, page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
  accessReview: t.field({
    type: AccessReviewRef,
    args: { id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => ctx.caller.iga.reviews.get({ id: String(args.id) }),
  }),
  accessReviewItems: t.field({
    type: ReviewItemPageRef,
    description: "A review's items, by entitlement then user.",
    args: { reviewId: t.arg.id({ required: true }), state: t.arg({ type: ItemStateRef }), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.iga.reviews.items({
        id: String(args.reviewId),
        decision: args.state ?? undefined,
        page: args.page ?? undefined,
        per_page: args.perPage ?? undefined,
      }),
  }),
}));
