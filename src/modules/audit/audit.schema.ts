import { z } from 'zod';
import { instantInput } from '../../core/instant.ts';
import { pageParams } from '../../core/pagination.ts';

export const AUDIT_OUTCOMES = ['success', 'failure'] as const;
export const ACTOR_TYPES = ['user', 'api_key', 'system'] as const;

/** CONTRACT.md "Events": the shape of an audit event on every door. */
export const auditEventOutput = z
  .object({
    id: z.string(),
    event_type: z.string(),
    outcome: z.enum(AUDIT_OUTCOMES),
    actor: z.object({ type: z.enum(ACTOR_TYPES), id: z.string().nullable() }),
    target: z.object({ type: z.string(), id: z.string() }).nullable(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    request_id: z.string().nullable(),
    created_at: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'AuditEvent' });
export type AuditEventView = z.infer<typeof auditEventOutput>;

/**
 * Matches are counted up to this many; pages reach no further (a page past it is empty, as a page past
 * any list's end is). Past it, narrow the filters or move the time range (`until`): see docs/decisions.md.
 */
export const AUDIT_WINDOW = 10_000;

export const auditPage = z.object({
  data: z.array(auditEventOutput),
  meta: z.object({
    total: z.number().int().describe(`Matching events, counted up to ${AUDIT_WINDOW}`),
    total_capped: z.boolean().describe(`true when more than ${AUDIT_WINDOW} events match (total is then ${AUDIT_WINDOW})`),
    page: z.number().int(),
    per_page: z.number().int(),
  }),
});
export type AuditPage = z.infer<typeof auditPage>;

/** Filters shared by the list and the counts. `since` is inclusive, `until` exclusive. */
export const auditFilters = {
  event_type: z.string().trim().min(1).max(100).optional(),
  outcome: z.enum(AUDIT_OUTCOMES).optional(),
  actor_type: z.enum(ACTOR_TYPES).optional(),
  actor_id: z.string().trim().min(1).max(100).optional(),
  target_type: z.string().trim().min(1).max(100).optional(),
  target_id: z.string().trim().min(1).max(100).optional(),
  since: instantInput.optional(),
  until: instantInput.optional(),
};

function rangeInOrder(value: { since?: string; until?: string }): boolean {
  return !value.since || !value.until || new Date(value.since) < new Date(value.until);
}
const rangeProblem = { message: 'since must be before until', path: ['since'] };

export const listAuditInput = z
  .object({ ...auditFilters, ...pageParams })
  .refine(rangeInOrder, rangeProblem)
  .prefault({});
export type ListAuditInput = z.infer<typeof listAuditInput>;
export type AuditFilters = Omit<ListAuditInput, 'page' | 'per_page'>;

export const auditEventIdInput = z.object({ id: z.string().max(100) });

export const AUDIT_GROUPINGS = ['event_type', 'outcome', 'day'] as const;
export type AuditGrouping = (typeof AUDIT_GROUPINGS)[number];

/** The longest range one count covers; the default is the last 30 days. */
export const COUNTS_MAX_DAYS = 366;

export const auditCountsInput = z
  .object({ group_by: z.enum(AUDIT_GROUPINGS), ...auditFilters })
  .refine(rangeInOrder, rangeProblem)
  .prefault({ group_by: 'event_type' });
export type AuditCountsInput = z.infer<typeof auditCountsInput>;

export const auditCountsOutput = z.array(z.object({ key: z.string(), count: z.number().int() }));
