import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { CLAIM_DUE, claimValues } from './dispatcher.ts';

interface PlanNode {
  'Relation Name'?: string;
  'Node Type': string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

/**
 * The dispatcher claims due deliveries every second and after every send. An endpoint that already has
 * its share of sends in flight (a slow receiver) can have a long backlog of due deliveries; the claim
 * must not read through it to find the other endpoints' work. Measured in buffers read (not time).
 */
describe('claiming due deliveries does not read a busy endpoint’s backlog', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let busy: string;
  let other: string;

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    await app.deps.webhooks.stop();
    ws = await createWorkspace(app, 'Backlog');
    const endpoint = async () =>
      (await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: 'http://127.0.0.1:9/hooks' } })).body.data
        .id as string;
    busy = await endpoint();
    other = await endpoint();
  });
  afterAll(async () => {
    // Their deliveries go with them: the backlog stays out of every later claim on this database.
    for (const id of [busy, other]) await call(app, 'DELETE', `/api/v1/webhooks/${id}`, { token: ws.apiKey });
    await app.close();
  });

  /** Adds `count` due deliveries to `endpointId`, older than anything else due. */
  async function backlog(endpointId: string, count: number) {
    await app.deps.orm.em.getConnection().execute(
      `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_type, payload, status, attempts, scheduled_attempts,
                                       next_attempt_at, created_at, updated_at)
       select 'dlv_' || md5(? || g || clock_timestamp()), ?, ?, 'webhook.test', '{}'::jsonb, 'pending', 0, 0,
              now() - interval '30 days' + g * interval '1 ms', now(), now()
         from generate_series(1, ?) g`,
      [endpointId, ws.id, endpointId, count],
    );
    await app.deps.orm.em.getConnection().execute('analyze webhook_deliveries');
  }

  /** Runs `run` in a transaction that is rolled back: the claim's leases are never kept. */
  async function rolledBack<T>(run: (em: ReturnType<typeof app.deps.orm.em.fork>) => Promise<T>): Promise<T> {
    const em = app.deps.orm.em.fork();
    await em.begin();
    try {
      return await run(em);
    } finally {
      await em.rollback();
    }
  }

  /** Buffers the claim reads from webhook_deliveries, and the endpoints it claims for, with `busy` at its share. */
  async function claimCost(): Promise<{ buffers: number; claimed: string[] }> {
    const values = () => claimValues(new Date(), new Map([[busy, 4]]), 20);
    const claimed = await rolledBack((em) => em.execute<{ endpoint_id: string }[]>(CLAIM_DUE, values()));
    const [row] = await rolledBack((em) =>
      em.execute<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(`explain (analyze, buffers, format json) ${CLAIM_DUE}`, values()),
    );
    const reads = (node: PlanNode): number =>
      (node['Relation Name'] === 'webhook_deliveries' ? node['Shared Hit Blocks'] + node['Shared Read Blocks'] : 0) +
      (node.Plans ?? []).reduce((sum, child) => sum + reads(child), 0);
    if (!row) throw new Error('no plan');
    return { buffers: reads(row['QUERY PLAN'][0].Plan), claimed: claimed.map((r) => r.endpoint_id) };
  }

  it('costs the same with 100 or 20,000 deliveries waiting for the busy endpoint, and claims only the other one’s', async () => {
    await backlog(busy, 100);
    await backlog(other, 1);
    const small = await claimCost();
    await backlog(busy, 19_900);
    const large = await claimCost();
    expect(small.claimed).toContain(other);
    expect(large.claimed).toContain(other);
    expect(large.claimed).not.toContain(busy);
    expect(large.buffers).toBeLessThan(small.buffers + 100);
  });
});
