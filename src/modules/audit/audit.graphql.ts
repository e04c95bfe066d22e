import { builder } from '../../graphql/builder.ts';
import { ACTOR_TYPES, AUDIT_GROUPINGS, AUDIT_OUTCOMES, type AuditEventView, type AuditPage } from './audit.schema.ts';

const AuditOutcomeRef = builder.enumType('AuditOutcome', { values: AUDIT_OUTCOMES });
const ActorTypeRef = builder.enumType('AuditActorType', { values: ACTOR_TYPES });
const AuditGroupingRef = builder.enumType('AuditGrouping', { values: AUDIT_GROUPINGS });

const AuditActorRef = builder.objectRef<AuditEventView['actor']>('AuditActor').implement({
  fields: (t) => ({
    type: t.field({ type: ActorTypeRef, resolve: (actor) => actor.type }),
    id: t.exposeString('id', { nullable: true }),
  }),
});

const AuditTargetRef = builder.objectRef<NonNullable<AuditEventView['target']>>('AuditTarget').implement({
  fields: (t) => ({
    type: t.exposeString('type'),
    id: t.exposeString('id'),
  }),
});

const AuditEventRef = builder.objectRef<AuditEventView>('AuditEvent').implement({
  description: 'One append-only audit record.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventType: t.exposeString('event_type'),
    outcome: t.field({ type: AuditOutcomeRef, resolve: (event) => event.outcome }),
    actor: t.field({ type: AuditActorRef, resolve: (event) => event.actor }),
    target: t.field({ type: AuditTargetRef, nullable: true, resolve: (event) => event.target }),
    ip: t.exposeString('ip', { nullable: true }),
    userAgent: t.exposeString('user_agent', { nullable: true }),
    requestId: t.exposeString('request_id', { nullable: true }),
    createdAt: t.exposeString('created_at'),
    details: t.field({ type: 'JSON', resolve: (event) => event.details }),
  }),
});

const AuditPageMetaRef = builder.objectRef<AuditPage['meta']>('AuditPageMeta').implement({
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Matching events, counted up to 10,000' }),
    totalCapped: t.exposeBoolean('total_capped', { description: 'More than 10,000 events match' }),
    page: t.exposeInt('page'),
    perPage: t.exposeInt('per_page'),
  }),
});

const AuditEventPageRef = builder.objectRef<AuditPage>('AuditEventPage').implement({
  fields: (t) => ({
    data: t.field({ type: [AuditEventRef], resolve: (page) => page.data }),
    meta: t.field({ type: AuditPageMetaRef, resolve: (page) => page.meta }),
  }),
});

const AuditCountRef = builder.objectRef<{ key: string; count: number }>('AuditCount').implement({
  description: 'How many events share one event type, outcome or UTC day (YYYY-MM-DD).',
  fields: (t) => ({
    key: t.exposeString('key'),
    count: t.exposeInt('count'),
  }),
});

const AuditFilterRef = builder.inputType('AuditFilter', {
  description: 'Filters of the audit log; since is inclusive, until exclusive (ISO 8601).',
  fields: (t) => ({
    eventType: t.string(),
    outcome: t.field({ type: AuditOutcomeRef }),
    actorType: t.field({ type: ActorTypeRef }),
    actorId: t.string(),
    targetType: t.string(),
    targetId: t.string(),
    since: t.string(),
    until: t.string(),
  }),
});

type AuditFilterInput = typeof AuditFilterRef.$inferInput;

function filters(filter: AuditFilterInput | null | undefined) {
  return {
    event_type: filter?.eventType ?? undefined,
    outcome: filter?.outcome ?? undefined,
    actor_type: filter?.actorType ?? undefined,
    actor_id: filter?.actorId ?? undefined,
    target_type: filter?.targetType ?? undefined,
    target_id: filter?.targetId ?? undefined,
    since: filter?.since ?? undefined,
    until: filter?.until ?? undefined,
  };
}

builder.queryFields((t) => ({
  auditEvents: t.field({
    type: AuditEventPageRef,
    description: 'The audit log, newest first.',
    args: { filter: t.arg({ type: AuditFilterRef }), page: t.arg.int(), perPage: t.arg.int() },
    resolve: (_root, args, ctx) =>
      ctx.caller.audit.list({ ...filters(args.filter), page: args.page ?? undefined, per_page: args.perPage ?? undefined }),
  }),
  auditEventCounts: t.field({
    type: [AuditCountRef],
    description:
      'Audit events counted by event type, outcome or UTC day, over the filters (from 30 days before until, or before now, unless since is set).',
    args: { groupBy: t.arg({ type: AuditGroupingRef, required: true }), filter: t.arg({ type: AuditFilterRef }) },
    resolve: (_root, args, ctx) => ctx.caller.audit.counts({ group_by: args.groupBy, ...filters(args.filter) }),
  }),
}));
