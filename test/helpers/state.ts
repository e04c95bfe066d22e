import type { TestApp } from './app.ts';

/**
 * What a workspace holds, as one digest per table, read in one statement. Rows are compared whole
 * (an UPDATE shows as well as an INSERT or DELETE), except:
 * - tables that background workers move on their own (the outboxes, webhook deliveries and attempts)
 *   are compared by their ids only: a dispatcher marking a row sent is not the request's doing;
 * - `audit_events` is left out of the digests and read separately (`auditRows`), because a refused
 *   request may leave a failure row by design.
 */
export interface WorkspaceState {
  digests: Map<string, string>;
  audit: Map<string, { event_type: string; outcome: string }>;
}

const BY_ID_ONLY = new Set(['events', 'email_outbox', 'webhook_deliveries', 'webhook_attempts']);
const SEPARATE = new Set(['audit_events']);

let statement: { text: string; params: number } | undefined;

/** One `select name, digest` per table, joined by `union all`; each part takes the workspace id once. */
async function digestStatement(app: TestApp): Promise<{ text: string; params: number }> {
  if (statement) return statement;
  const tables = await app.deps.orm.em
    .fork()
    .getConnection()
    .execute<{ table_name: string }[]>(
      "select table_name from information_schema.columns where table_schema = 'public' and column_name = 'workspace_id' order by table_name",
    );
  const parts = tables
    .map((t) => t.table_name)
    .filter((name) => !SEPARATE.has(name))
    .map((name) => {
      const row = BY_ID_ONLY.has(name) ? 'x.id' : 'x::text';
      return `select '${name}' as name, md5(coalesce(string_agg(${row}, '|' order by ${row}), '')) as digest from "${name}" x where x.workspace_id = ?`;
    });
  parts.push(`select 'workspaces', md5(coalesce(string_agg(x::text, '|'), '')) from workspaces x where x.id = ?`);
  parts.push(
    `select 'oidc_payloads', md5(coalesce(string_agg(x.kind || x.id, '|' order by x.kind, x.id), '')) from oidc_payloads x ` +
      'where x.client_id in (select id from applications where workspace_id = ?)',
  );
  statement = { text: parts.join(' union all '), params: parts.length };
  return statement;
}

export async function workspaceState(app: TestApp, workspaceId: string): Promise<WorkspaceState> {
  const connection = app.deps.orm.em.fork().getConnection();
  const { text, params } = await digestStatement(app);
  const digests = await connection.execute<{ name: string; digest: string }[]>(text, Array<string>(params).fill(workspaceId));
  const audit = await connection.execute<{ id: string; event_type: string; outcome: string }[]>(
    'select id, event_type, outcome from audit_events where workspace_id = ?',
    [workspaceId],
  );
  return {
    digests: new Map(digests.map((r) => [r.name, r.digest])),
    audit: new Map(audit.map((r) => [r.id, { event_type: r.event_type, outcome: r.outcome }])),
  };
}

/** Tables whose rows differ, and the audit rows that appeared, from `before` to `after`. */
export function stateChanges(before: WorkspaceState, after: WorkspaceState) {
  const tables = [...after.digests].filter(([name, digest]) => before.digests.get(name) !== digest).map(([name]) => name);
  const newAudit = [...after.audit].filter(([id]) => !before.audit.has(id)).map(([id, row]) => ({ id, ...row }));
  const goneAudit = [...before.audit.keys()].filter((id) => !after.audit.has(id));
  return { tables, newAudit, goneAudit };
}
