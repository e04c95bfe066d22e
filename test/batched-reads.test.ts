import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn, type SignedIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { metricValue, scrapeMetrics } from './helpers/metrics.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

const METRICS_TOKEN = 'metrics-token-credential-lookups';

/**
 * Every request's credential is checked against the database, and requests that arrive together
 * share one statement for it, as do reads of one user (core/batched-lookup.ts). Sharing must never
 * blur the answers: in one burst, the revoked credential is refused and every live one accepted, and
 * each workspace reads only its own users.
 */
describe('reads of concurrent requests that share a statement', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN });
    ws = await createWorkspace(app, 'Credential lookups');
  });
  afterAll(() => app.close());

  async function counters(kind: 'session' | 'api_key'): Promise<{ lookups: number; statements: number }> {
    const text = await scrapeMetrics(app, METRICS_TOKEN);
    return {
      lookups: metricValue(text, `credential_lookups_total{kind="${kind}"}`),
      statements: metricValue(text, `credential_lookup_statements_total{kind="${kind}"}`),
    };
  }

  it('share statements, and each answer is its own: the ended session is refused in the same burst as live ones', async () => {
    const sessions: SignedIn[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await signIn(app, ws.id, ws.owner.email, ws.owner.password));
    const ended = sessions[2] as SignedIn;
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: ended.accessToken })).status).toBe(200);

    const before = await counters('session');
    const burst = Array.from({ length: 24 }, (_, i) => sessions[i % sessions.length] as SignedIn);
    const answers = await Promise.all(burst.map((s) => call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: s.accessToken })));
    const after = await counters('session');

    answers.forEach((answer, i) => {
      const expected = burst[i] === ended ? [401, 'INVALID_TOKEN'] : [200, undefined];
      expect([answer.status, answer.body.error?.code], `request ${i}`).toEqual(expected);
    });
    expect(after.lookups - before.lookups).toBe(24);
    expect(after.statements - before.statements).toBeGreaterThanOrEqual(1);
    expect(after.statements - before.statements).toBeLessThan(24);
  });

  it('do the same for API keys: a revoked key is refused next to live ones', async () => {
    const created = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: 'to revoke' } });
    expect(created.status).toBe(201);
    const revoked = created.body.data.key as string;
    expect((await call(app, 'DELETE', `/api/v1/api-keys/${created.body.data.id}`, { token: ws.apiKey })).status).toBe(200);

    const before = await counters('api_key');
    const burst = Array.from({ length: 20 }, (_, i) => (i % 5 === 0 ? revoked : ws.apiKey));
    const answers = await Promise.all(burst.map((key) => call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: key })));
    const after = await counters('api_key');

    answers.forEach((answer, i) => expect(answer.status, `request ${i}`).toBe(burst[i] === revoked ? 401 : 200));
    expect(after.lookups - before.lookups).toBe(20);
    expect(after.statements - before.statements).toBeLessThan(20);
  });

  it('keep each workspace to its own users: in one burst, another workspace’s user id is 404 and its own 200', async () => {
    const other = await createWorkspace(app, 'Credential lookups, other');
    const reads = [
      { key: ws.apiKey, id: ws.owner.id, status: 200, email: ws.owner.email },
      { key: other.apiKey, id: ws.owner.id, status: 404 },
      { key: other.apiKey, id: other.owner.id, status: 200, email: other.owner.email },
      { key: ws.apiKey, id: other.owner.id, status: 404 },
    ];
    const burst = Array.from({ length: 24 }, (_, i) => reads[i % reads.length] as (typeof reads)[number]);
    const answers = await Promise.all(burst.map((read) => call(app, 'GET', `/api/v1/users/${read.id}`, { token: read.key })));
    answers.forEach((answer, i) => {
      const read = burst[i] as (typeof reads)[number];
      expect([answer.status, answer.body.data?.email], `request ${i}`).toEqual([read.status, read.email]);
    });
  });
});
