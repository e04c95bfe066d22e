import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SWEEPS } from '../src/retention.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/** The node that picks the batch's rows (under `for update skip locked`: LockRows), wherever the plan puts it. */
function picking(plan: PlanNode): PlanNode | undefined {
  if (plan['Node Type'] === 'LockRows') return plan.Plans?.[0];
  return (plan.Plans ?? []).map(picking).find((node) => node !== undefined);
}

/** Every scan under `plan`, as `Node Type` or `Node Type on Index Name`. */
function scans(plan: PlanNode | undefined): string[] {
  if (!plan) return [];
  const own = plan['Node Type'].endsWith('Scan') ? [[plan['Node Type'], plan['Index Name']].filter(Boolean).join(' on ')] : [];
  return [...own, ...(plan.Plans ?? []).flatMap(scans)];
}

/** The node the delete reads its rows from (not the InitPlan that picks them). */
function deleting(plan: PlanNode): PlanNode | undefined {
  return plan.Plans?.find((node) => node['Parent Relationship'] !== 'InitPlan');
}

/**
 * Each swept table's `n` rows, none of them due: a scan of the table reads them all for nothing. `?`s
 * are the workspace, the user, the organization and the webhook endpoint; ids are salted with the
 * workspace's so that no run meets another's rows.
 */
const SEEDS: Record<string, (n: number) => string> = {
  sessions: (n) => `insert into sessions (id, workspace_id, user_id, created_at, last_refreshed_at, expires_at)
    select 'ses_sp' || g || md5(?), ?, ?, now(), now(), now() + random() * interval '30 days'
    from generate_series(1, ${n}) g, (select ?::text o, ?::text e) x`,
  password_reset_tokens: (n) => `insert into password_reset_tokens (id, workspace_id, user_id, token_hash, created_at, expires_at)
    select 'prt_sp' || g || md5(?), ?, ?, md5(g || o || e), now(), now() + random() * interval '1 hour'
    from generate_series(1, ${n}) g, (select ?::text o, ?::text e) x`,
  mfa_challenges: (n) => `insert into mfa_challenges (id, workspace_id, user_id, token_hash, created_at, expires_at)
    select 'mfc_sp' || g || md5(?), ?, ?, md5(g || o || e), now(), now() + random() * interval '5 minutes'
    from generate_series(1, ${n}) g, (select ?::text o, ?::text e) x`,
  risk_scores: (
    n,
  ) => `insert into risk_scores (id, workspace_id, user_id, email, ip, score, reasons, outcome, locked_account, threshold, created_at)
    select 'rsk_sp' || g || md5(?), ?, ?, 'sweep@example.com', '10.0.0.1', 0, '[]', 'allowed', false, 70,
           now() - random() * interval '80 days'
    from generate_series(1, ${n}) g, (select ?::text o, ?::text e) x`,
  events: (n) => `insert into events (id, workspace_id, type, payload, created_at, fanned_out_at)
    select 'evt_sp' || g || md5(?), ?, 'user.created', jsonb_build_object('user', ?::text), t, t
    from (select g, now() - random() * interval '6 days' t from generate_series(1, ${n}) g) s, (select ?::text o, ?::text e) x`,
  webhook_deliveries: (n) => `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_type, payload, status, attempts,
                                                       scheduled_attempts, created_at, updated_at)
    select 'dlv_sp' || g || md5(?), ?, e, 'user.created', jsonb_build_object('user', ?::text, 'org', o), 'succeeded', 1, 1, t, t
    from (select g, now() - random() * interval '29 days' t from generate_series(1, ${n}) g) s, (select ?::text o, ?::text e) x`,
  email_outbox: (n) => `insert into email_outbox (id, workspace_id, template, to_address, subject, text_body, status, attempts, created_at,
                                           next_attempt_at, sent_at)
    select 'eml_sp' || g || md5(?), ?, 'verify_email', ? || '@example.com', 'Verify your email', '', 'sent', 1, t, t, t
    from (select g, now() - random() * interval '6 days' t from generate_series(1, ${n}) g) s, (select ?::text o, ?::text e) x`,
  external_sign_ins: (
    n,
  ) => `insert into external_sign_ins (id, workspace_id, kind, source, state_hash, flow_sealed, redirect_uri, expires_at,
                                                     code_hash, code_expires_at, created_at)
    select 'xsi_sp' || g || md5(?), ?, 'social', 'google', md5(g || o), md5(?), 'https://app.example.com/', t,
           case when g % 2 = 0 then md5(g || e) end, case when g % 2 = 0 then t + interval '1 minute' end, now()
    from (select g, now() + random() * interval '10 minutes' t from generate_series(1, ${n}) g) s, (select ?::text o, ?::text e) x`,
  portal_links: (
    n,
  ) => `insert into portal_links (id, workspace_id, organization_id, token_hash, expires_at, session_hash, session_expires_at, created_at)
    select 'ptl_sp' || g || md5(?), ?, o, md5(g || ?), t,
           case when g % 2 = 0 then md5(g || e) end, case when g % 2 = 0 then t + interval '1 hour' end, now()
    from (select g, now() + random() * interval '5 minutes' t from generate_series(1, ${n}) g) s, (select ?::text o, ?::text e) x`,
  oidc_payloads: (n) => `insert into oidc_payloads (kind, id, payload, grant_id, client_id, expires_at)
    select 'AccessToken', 'sp' || g || md5(?), jsonb_build_object('accountId', ?::text, 'user', ?::text), o || g, e,
           now() + random() * interval '1 hour'
    from generate_series(1, ${n}) g, (select ?::text o, ?::text e) x`,
};

/** The index each sweep must pick its rows through. */
const INDEXES: Record<string, string> = {
  sessions: 'sessions_done_at_index',
  password_reset_tokens: 'password_reset_tokens_expires_at_index',
  mfa_challenges: 'mfa_challenges_expires_at_index',
  risk_scores: 'risk_scores_recent_index',
  events: 'events_workspace_id_created_at_index',
  webhook_deliveries: 'webhook_deliveries_done_index',
  email_outbox: 'email_outbox_done_index',
  external_sign_ins: 'external_sign_ins_done_at_index',
  portal_links: 'portal_links_done_at_index',
  oidc_payloads: 'oidc_payloads_expires_at_index',
};

/**
 * The hourly sweeps run a batch at a time until a batch comes back short; each must find the rows it
 * deletes through an index, and delete them where they are, not by reading tables that take a row per
 * sign-in, mail or delivery. The plan is checked, not a time: as planned for the cutoff at hand, and
 * as the generic plan PostgreSQL may settle on for the prepared statement (it knows no cutoff).
 */
describe('every sweep finds its rows through an index and deletes them by TID', () => {
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
    const organizationId = `org_sp${ws.id}`;
    const endpointId = `whe_sp${ws.id}`;
    await sql(
      `insert into organizations (id, workspace_id, name, sso, created_at, updated_at) values (?, ?, 'Sweep', '{}', now(), now())`,
      [organizationId, ws.id],
    );
    await sql(
      `insert into webhook_endpoints (id, workspace_id, url, event_types, secret_sealed, enabled, created_at, updated_at)
       values (?, ?, 'https://hooks.example.com/', '[]', 'sealed', false, now(), now())`,
      [endpointId, ws.id],
    );
    // Enough rows that a third of the table (the generic plan's guess of what is due) exceeds a batch:
    // below that the plan scans the table, rightly so, as the smaller read.
    for (const sweep of SWEEPS) {
      const seed = SEEDS[sweep.table];
      if (seed) await sql(seed(Math.max(20_000, 8 * sweep.batch)), [ws.id, ws.id, userId, organizationId, endpointId]);
    }
    await sql(`analyze ${Object.keys(SEEDS).join(', ')}`);
  });
  afterAll(async () => {
    await sql(`delete from oidc_payloads where payload ->> 'accountId' = ?`, [ws.id]);
    for (const table of Object.keys(SEEDS).filter((name) => name !== 'oidc_payloads')) {
      await sql(`delete from ${table} where workspace_id = ?`, [ws.id]);
    }
    await app.close();
  });

  /** The plan of one batch of `sweep` at its cutoff, generic (as a cached prepared statement's) or not. */
  async function sweepPlan(text: string, keepMs: number, generic: boolean): Promise<PlanNode> {
    const em = app.deps.orm.em.fork();
    await em.begin();
    try {
      await em.execute(`set local plan_cache_mode = ${generic ? 'force_generic_plan' : 'force_custom_plan'}`);
      await em.execute(`prepare sweep_plan_test(timestamptz) as ${text}`);
      const [row] = await em.execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
        `explain (format json) execute sweep_plan_test(now() - ${keepMs} * interval '1 millisecond')`,
      );
      await em.execute('deallocate sweep_plan_test');
      if (!row) throw new Error('no plan');
      return row['QUERY PLAN'][0].Plan;
    } finally {
      await em.rollback();
    }
  }

  it('has a seed and an index for every sweep', () => {
    const tables = SWEEPS.map((sweep) => sweep.table).sort();
    expect(Object.keys(SEEDS).sort()).toEqual(tables);
    expect(Object.keys(INDEXES).sort()).toEqual(tables);
  });

  it.each(SWEEPS.map((sweep) => [sweep.table, sweep] as const))(
    'sweeps %s through its index, for the cutoff at hand and in the generic plan',
    async (table, sweep) => {
      // For the cutoff at hand: through the index, in its order or sorted (a bitmap scan when few are due).
      const custom = await sweepPlan(sweep.statement.text, sweep.keepMs, false);
      expect(scans(picking(custom)).filter((scan) => !scan.startsWith('Subquery'))).toContainEqual(
        expect.stringMatching(` on ${INDEXES[table]}$`),
      );
      expect(scans(picking(custom))).not.toContain('Seq Scan');
      // Generic (no cutoff known, a third of the table guessed due): walking the index in its order,
      // so a batch stops at its limit; not a Seq Scan with a filter, or a sort of every row it guessed due.
      const generic = await sweepPlan(sweep.statement.text, sweep.keepMs, true);
      const picked = picking(generic);
      if (sweep.statement.text.includes('cross join lateral')) {
        // Swept a workspace at a time: the guess of one workspace's due rows comes from how many
        // workspaces the statistics saw, so with many (as other test files leave in this database)
        // the plan reads that workspace's due rows through the index and sorts them, the cheaper
        // read for a few; with few, it walks the index in order. Either way through the index.
        expect(['Index Scan', 'Sort']).toContain(picked?.['Node Type']);
        expect(scans(picked)).toContainEqual(expect.stringMatching(` on ${INDEXES[table]}$`));
        expect(scans(picked)).not.toContain('Seq Scan');
      } else {
        expect([picked?.['Node Type'], picked?.['Index Name']]).toEqual(['Index Scan', INDEXES[table]]);
      }
      // Not a hash join over a scan of the table: that read every row to delete a short batch.
      for (const plan of [custom, generic]) expect(deleting(plan)?.['Node Type']).toBe('Tid Scan');
    },
  );
});
