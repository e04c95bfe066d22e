import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { runStatementIn } from '../../core/sql.ts';
import { SCORE_ATTEMPT } from './risk.ts';

/** Sign-ins of the last hour in the workspace, each from its own address (a busy workspace). */
const RECENT_SIGN_INS = 3000;
/** The attempt's time: a day ahead, like the last hour's rows (below). */
const NOW = () => new Date(Date.now() + 24 * 3600 * 1000);

/**
 * The risk statement runs on every sign-in, so its cost must not grow with the workspace's traffic:
 * each count reads only the rows of this address or this account. Measured in buffers read (not
 * time), under both plans PostgreSQL may choose for a prepared statement.
 */
describe('the risk statement reads only the rows of this address and this account', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Busy');
    const connection = app.deps.orm.em.getConnection();
    const insert = (from: string) =>
      connection.execute(
        `insert into risk_scores (id, workspace_id, user_id, email, ip, user_agent, score, reasons, outcome, failure_reason,
                                  locked_account, threshold, created_at)
         select 'rsk_' || md5(?::text || ? || g), ?, null, 'user' || g || '@busy.test', '10.77.' || (g / 250) || '.' || (g % 250),
                'agent', 0, '[]'::jsonb, 'allowed', null, false, 80, ${from} - g * interval '1 second'
           from generate_series(1, ?) g`,
        [ws.id, from, ws.id, RECENT_SIGN_INS],
      );
    // Statistics taken before the last hour's rows arrived, as between two autovacuum runs: the
    // planner believes the last hour holds almost nothing, whichever index it reads it through. The
    // hour is a day ahead, so no other test's rows (all newer than any statistics) fall in it.
    await insert(`now() - interval '2 days'`);
    await connection.execute('analyze risk_scores');
    await insert(`now() + interval '1 day'`);
  });
  afterAll(() => app.close());

  interface PlanNode {
    'Node Type': string;
    'Relation Name'?: string;
    'Index Name'?: string;
    'Index Cond'?: string;
    'Actual Loops': number;
    'Shared Hit Blocks': number;
    'Shared Read Blocks': number;
    Plans?: PlanNode[];
  }

  /** The statement's plan, run (and rolled back) as PostgreSQL runs it with a generic or a custom plan. */
  async function plan(planCacheMode: 'force_generic_plan' | 'force_custom_plan'): Promise<PlanNode> {
    const em = app.deps.orm.em.fork();
    await em.begin();
    try {
      await em.execute(`set local plan_cache_mode = ${planCacheMode}`);
      const [row] = await runStatementIn<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        em,
        { name: `test_risk_plan_${planCacheMode}`, text: `explain (analyze, buffers, format json) ${SCORE_ATTEMPT.text}` },
        [ws.id, 'new@busy.test', '192.0.2.1', 'agent', NOW().toISOString(), 'rsk_probe', null, 'decide', null, false],
      );
      if (!row) throw new Error('no plan');
      return row['QUERY PLAN'][0].Plan;
    } finally {
      await em.rollback();
    }
  }

  /** The reads of earlier attempts that ran: each scan of risk_scores executed at least once. */
  function scansRun(node: PlanNode): PlanNode[] {
    const read = node['Relation Name'] === 'risk_scores' && node['Node Type'].endsWith('Scan') && node['Actual Loops'] > 0;
    const own = read ? [node] : [];
    return [...own, ...(node.Plans ?? []).flatMap(scansRun)];
  }

  for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
    it(`reads each signal once, by address through the address index (${mode})`, async () => {
      const root = await plan(mode);
      const scans = scansRun(root);
      // Five signals, five reads: the score and the reasons once read them all twice.
      expect(scans).toHaveLength(5);
      const byAddress = scans.filter((scan) => scan['Index Cond']?.includes('ip ='));
      expect(byAddress.map((scan) => scan['Index Name'])).toEqual(Array(3).fill('risk_scores_ip_index'));
      // A few pages, not the workspace's recent sign-ins (the account index over all of them was
      // about four pages a row).
      expect(root['Shared Hit Blocks'] + root['Shared Read Blocks']).toBeLessThan(200);
    });
  }
});
