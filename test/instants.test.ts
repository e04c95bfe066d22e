import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call, graphql } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

const PASSWORD = 'instants passphrase';

/** In the year 10000 once read as UTC; JavaScript writes it `+010000-…`, which PostgreSQL cannot read. */
const PAST_9999 = '9999-12-31T23:59:59-05:00';
/** In the year 0 once read as UTC, which PostgreSQL has no ISO spelling for. */
const BEFORE_0001 = '0001-01-01T00:00:00+01:00';

describe('instants a caller sends: the years 0001 to 9999 in UTC, every form taken alike', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function newUser() {
    const email = uniqueEmail('instant');
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  function expectRefused(res: { status: number; body: any }, path: string) {
    expect([res.status, res.body.error?.code]).toEqual([400, 'BAD_REQUEST']);
    expect(res.body.error.details).toContainEqual({ path, message: 'must fall between the years 0001 and 9999, UTC' });
  }

  it('refuses a role end date past the year 9999 in UTC with 400, and keeps the last second of 9999', async () => {
    const user = await newUser();
    expectRefused(
      await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: user.id, role_id: 'viewer', expires_at: PAST_9999 },
      }),
      'expires_at',
    );
    const roles = await call(app, 'GET', `/api/v1/users/${user.id}/roles`, { token: ws.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key)).toEqual(['member']);
    const last = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: 'viewer', expires_at: '9999-12-31T18:59:59-05:00' },
    });
    expect([last.status, last.body.data.expires_at]).toEqual([201, '9999-12-31T23:59:59.000Z']);
  });

  it('refuses such an end date or due date in governance with 400, and reads a bare date as an assignment does', async () => {
    const requester = await newUser();
    const { accessToken } = await signIn(app, ws.id, requester.email, PASSWORD);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewer = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id as string;
    const asked = await call(app, 'POST', '/api/v1/iga/requests', { token: accessToken, body: { entitlement_id: viewer } });
    expect(asked.status).toBe(201);
    const approve = (expires_at: string) =>
      call(app, 'POST', `/api/v1/iga/requests/${asked.body.data.id}/approve`, { token: ws.apiKey, body: { expires_at } });
    expectRefused(await approve(PAST_9999), 'expires_at');
    const review = await call(app, 'POST', '/api/v1/iga/reviews', {
      token: ws.apiKey,
      body: { name: 'Far', scope: { type: 'everyone' }, due_at: PAST_9999 },
    });
    expectRefused(review, 'due_at');

    const approved = await approve('2099-06-01');
    expect(approved.status).toBe(200);
    const held = await call(app, 'GET', `/api/v1/users/${requester.id}/roles`, { token: ws.apiKey });
    expect(held.body.data.find((r: { key: string }) => r.key === 'viewer').expires_at).toBe('2099-06-01T00:00:00.000Z');
  });

  it('refuses audit and risk-score bounds outside those years with 400, on REST and GraphQL', async () => {
    for (const bound of [PAST_9999, BEFORE_0001, '0000-01-01T00:00:00Z']) {
      expectRefused(await call(app, 'GET', `/api/v1/audit/events/?since=${encodeURIComponent(bound)}`, { token: ws.apiKey }), 'since');
      expectRefused(await call(app, 'GET', `/api/v1/audit/events/?until=${encodeURIComponent(bound)}`, { token: ws.apiKey }), 'until');
      expectRefused(
        await call(app, 'GET', `/api/v1/threat/scores/recent?since=${encodeURIComponent(bound)}`, { token: ws.apiKey }),
        'since',
      );
    }
    const far = await graphql(app, `{ riskScores(since: "${PAST_9999}") { meta { total } } }`, {}, ws.apiKey);
    expect(far.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
  });

  it('counts audit events back from an `until` early in the year 0001 without going before it', async () => {
    const res = await graphql<{ auditEventCounts: unknown[] }>(
      app,
      '{ auditEventCounts(groupBy: day, filter: { until: "0001-01-02T00:00:00Z" }) { key count } }',
      {},
      ws.apiKey,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.auditEventCounts).toEqual([]);
  });
});
