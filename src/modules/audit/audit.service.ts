import type { MikroORM } from '@mikro-orm/postgresql';
import { AppError } from '../../core/errors.ts';
import { isId } from '../../core/ids.ts';
import { offsetOf } from '../../core/pagination.ts';
import { runStatement, type Statement } from '../../core/sql.ts';
import type { ActorType, AuditOutcome } from './audit.entity.ts';
import {
  AUDIT_WINDOW,
  COUNTS_MAX_DAYS,
  type AuditCountsInput,
  type AuditEventView,
  type AuditFilters,
  type AuditPage,
  type ListAuditInput,
} from './audit.schema.ts';
import { DAY } from '../../core/clock.ts';
import { isoOf, notBeforeEarliest } from '../../core/instant.ts';

interface AuditRow {
  id: string;
  event_type: string;
  outcome: AuditOutcome;
  actor_type: ActorType;
  actor_id: string | null;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  details: Record<string, unknown>;
  created_at: Date | string;
}

const COLUMNS = 'id, event_type, outcome, actor_type, actor_id, target_type, target_id, ip, user_agent, request_id, details, created_at';

function toView(row: AuditRow): AuditEventView {
  return {
    id: row.id,
    event_type: row.event_type,
    outcome: row.outcome,
    actor: { type: row.actor_type, id: row.actor_id },
    target: row.target_type && row.target_id ? { type: row.target_type, id: row.target_id } : null,
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    created_at: isoOf(row.created_at),
    details: row.details,
  };
}

/** Each filter as a condition on one placeholder, in a fixed order (the order names the statement). */
const CONDITIONS: [keyof AuditFilters, (n: number) => string][] = [
  ['event_type', (n) => `event_type = $${n}`],
  ['outcome', (n) => `outcome = $${n}`],
  ['actor_type', (n) => `actor_type = $${n}`],
  ['actor_id', (n) => `actor_id = $${n}`],
  ['target_type', (n) => `target_type = $${n}`],
  ['target_id', (n) => `target_id = $${n}`],
  ['since', (n) => `created_at >= $${n}`],
  ['until', (n) => `created_at < $${n}`],
];

interface Where {
  /** Which filters are set, as a bit mask: one prepared statement per combination. */
  mask: number;
  text: string;
  params: unknown[];
}

function whereOf(workspaceId: string, filters: AuditFilters): Where {
  const clauses = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  let mask = 0;
  CONDITIONS.forEach(([key, clause], bit) => {
    const value = filters[key];
    if (value === undefined) return;
    mask |= 1 << bit;
    params.push(value);
    clauses.push(clause(params.length));
  });
  return { mask, text: clauses.join(' and '), params };
}

/*
 * The page is a prepared statement (core/sql.ts), one per filter combination so each keeps the plan
 * that fits it: newest first along one of the (workspace_id, <filter>, created_at desc, id desc)
 * indexes, whatever the values. Matches are counted only up to AUDIT_WINDOW (+1 to know there are
 * more): an exact count of a million rows costs far more than the page, and nobody pages that far
 * (docs/decisions.md). The count is planned for its values every time: how far it must read depends
 * on them (one outcome in ten fails), and a plan cached for the average read 100,000 rows (~15 ms)
 * where the right one reads 10,001 index entries.
 */
const listStatements = new Map<number, { page: Statement; count: Statement }>();

function statementsFor(where: Where) {
  let statements = listStatements.get(where.mask);
  if (!statements) {
    const n = where.params.length;
    statements = {
      page: {
        name: `audit_list_${where.mask}`,
        text: `select ${COLUMNS} from audit_events where ${where.text} order by created_at desc, id desc limit $${n + 1} offset $${n + 2}`,
      },
      count: {
        text: `select count(*)::int as total from (select 1 from audit_events where ${where.text} limit ${AUDIT_WINDOW + 1}) m`,
      },
    };
    listStatements.set(where.mask, statements);
  }
  return statements;
}

export async function listAuditEvents(orm: MikroORM, workspaceId: string, query: ListAuditInput): Promise<AuditPage> {
  const where = whereOf(workspaceId, query);
  const statements = statementsFor(where);
  const { limit, offset } = offsetOf(query);
  // Pages reach the newest AUDIT_WINDOW matches, the ones `total` counts: a page past them is empty
  // without reading the index that far, and the page across the edge stops at it.
  const reach = Math.min(limit, AUDIT_WINDOW - offset);
  const [rows, counted] = await Promise.all([
    reach > 0 ? runStatement<AuditRow>(orm, statements.page, [...where.params, reach, offset]) : Promise.resolve([]),
    runStatement<{ total: number }>(orm, statements.count, where.params),
  ]);
  const total = counted[0]?.total ?? 0;
  return {
    data: rows.map(toView),
    meta: { total: Math.min(total, AUDIT_WINDOW), total_capped: total > AUDIT_WINDOW, page: query.page, per_page: query.per_page },
  };
}

const BY_ID: Statement = { name: 'audit_get', text: `select ${COLUMNS} from audit_events where id = $1 and workspace_id = $2` };

export async function getAuditEvent(orm: MikroORM, workspaceId: string, id: string): Promise<AuditEventView> {
  const [row] = isId('evt', id) ? await runStatement<AuditRow>(orm, BY_ID, [id, workspaceId]) : [];
  if (!row) throw new AppError('NOT_FOUND', 'No such audit event');
  return toView(row);
}

const GROUP_KEYS = {
  event_type: 'event_type',
  outcome: 'outcome',
  day: `to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')`,
} as const;

/**
 * Events counted by type, outcome or UTC day, over the filters and a bounded range (from 30 days
 * before `until`, or before now, unless `since` is set; at most COUNTS_MAX_DAYS): a report, so one
 * grouped scan of the range.
 */
export async function countAuditEvents(orm: MikroORM, workspaceId: string, input: AuditCountsInput, now: Date) {
  const end = input.until ? new Date(input.until) : now;
  const since = input.since ?? notBeforeEarliest(new Date(end.getTime() - 30 * DAY)).toISOString();
  if (end.getTime() - new Date(since).getTime() > COUNTS_MAX_DAYS * DAY) {
    throw new AppError('BAD_REQUEST', `Counts cover at most ${COUNTS_MAX_DAYS} days`, {
      details: [{ path: 'since', message: `the range may span at most ${COUNTS_MAX_DAYS} days` }],
    });
  }
  const where = whereOf(workspaceId, { ...input, since });
  const key = GROUP_KEYS[input.group_by];
  const rows = await runStatement<{ key: string; count: number }>(
    orm,
    {
      name: `audit_counts_${input.group_by}_${where.mask}`,
      text: `select ${key} as key, count(*)::int as count from audit_events where ${where.text} group by 1 order by ${
        input.group_by === 'day' ? '1' : '2 desc, 1'
      }`,
    },
    where.params,
  );
  return rows;
}
