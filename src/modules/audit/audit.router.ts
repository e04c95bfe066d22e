import { managementProcedure, router } from '../../core/trpc.ts';
import { auditCountsInput, auditCountsOutput, auditEventIdInput, auditEventOutput, auditPage, listAuditInput } from './audit.schema.ts';
import { countAuditEvents, getAuditEvent, listAuditEvents } from './audit.service.ts';

const tags = ['audit'];

export const auditRouter = router({
  list: managementProcedure('audit:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/audit/events/',
        tags,
        summary: 'List audit events, newest first (filters: event_type, outcome, actor, target, time range)',
        protect: true,
      },
    })
    .input(listAuditInput)
    .output(auditPage)
    .query(({ ctx, input }) => listAuditEvents(ctx.deps.orm, ctx.workspaceId, input)),

  get: managementProcedure('audit:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/audit/events/{id}', tags, summary: 'Get one audit event', protect: true } })
    .input(auditEventIdInput)
    .output(auditEventOutput)
    .query(({ ctx, input }) => getAuditEvent(ctx.deps.orm, ctx.workspaceId, input.id)),

  /** GraphQL only (reports): events counted by type, outcome or day. */
  counts: managementProcedure('audit:read')
    .input(auditCountsInput)
    .output(auditCountsOutput)
    .query(({ ctx, input }) => countAuditEvents(ctx.deps.orm, ctx.workspaceId, input, ctx.deps.clock.now())),
});
