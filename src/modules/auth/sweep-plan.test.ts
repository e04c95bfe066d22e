import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { sessionSweep } from './retention.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The node that picks the batch's rows (under `for update skip locked`: LockRows), wherever the plan puts it. */
function picking(plan: PlanNode): PlanNode | undefined {
  if (plan['Node Type'] === 'LockRows') return plan.Plans?.[0];
  return (plan.Plans ?? []).map(picking).find((node) => node !== undefined);
}

/**
 * The hourly sweep of ended and expired sessions runs a batch at a time until a batch comes back short;
 * it must find the sessions it deletes through an index, not by reading a table that holds a row per
 * signed-in device. The plan is checked, not a time: as planned for the cutoff at hand, and as the
 * generic plan PostgreSQL may settle on for the prepared statement (it knows no cutoff). The batch's
 * rows are then deleted by primary key (or, in a table this small, through a hash join).
 */
describe('the session sweep finds its rows through an index', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let userId: string;
  const sql = <T = Record<string, unknown>>(text: string, values: unknown[] = []) =>
    app.deps.orm.em.getConnection().execute<T[]>(text, values);

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Sweep plan');
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('sweep'), password: 'a sweep passphrase' },
    });
    userId = created.body.data.id;
    // 20,000 live sessions, expiring in no order: none is due, so a scan of the table reads them all for nothing.
    await sql(
      `insert into sessions (id, workspace_id, user_id, created_at, last_refreshed_at, expires_at)
       select 'ses_sweepplan' || g || md5(?), ?, ?, now(), now(),
              now() + interval '1 day' + random() * interval '29 days' from generate_series(1, 20000) g`,
      [ws.id, ws.id, userId],
    );
    await sql('analyze sessions');
  });
  afterAll(async () => {
    await sql('delete from sessions where user_id = ?', [userId]);
    await app.close();
  });

  /** The plan of one sweep batch at a cutoff a week ago, generic (as a cached prepared statement's) or not. */
  async function sweepPlan(generic: boolean): Promise<PlanNode> {
    const em = app.deps.orm.em.fork();
    await em.begin();
    try {
      await em.execute(`set local plan_cache_mode = ${generic ? 'force_generic_plan' : 'force_custom_plan'}`);
      await em.execute(`prepare sweep_plan_test(timestamptz) as ${sessionSweep.statement.text}`);
      const [row] = await em.execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
        `explain (format json) execute sweep_plan_test(now() - interval '7 days')`,
      );
      await em.execute('deallocate sweep_plan_test');
      if (!row) throw new Error('no plan');
      return row['QUERY PLAN'][0].Plan;
    } finally {
      await em.rollback();
    }
  }

  it('picks the sessions due through their index, for the cutoff at hand and in the generic plan', async () => {
    for (const generic of [false, true]) {
      const node = picking(await sweepPlan(generic));
      // Not a Seq Scan with a filter: that read every session to find the few due.
      expect([node?.['Node Type'], node?.['Index Name']], `generic: ${generic}`).toEqual(['Index Scan', 'sessions_done_at_index']);
    }
  });
});
