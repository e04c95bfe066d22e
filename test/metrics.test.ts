import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, someIp } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { scrapeMetrics } from './helpers/metrics.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

describe('GET /metrics', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN });
    ws = await createWorkspace(app, 'Metrics');
  });
  afterAll(() => app.close());

  const scrape = () => scrapeMetrics(app, METRICS_TOKEN);

  it('is protected by its token', async () => {
    expect((await call(app, 'GET', '/metrics')).status).toBe(401);
    expect((await call(app, 'GET', '/metrics', { token: 'wrong-token-0123456789' })).status).toBe(401);
  });

  it('counts requests by route template and status, sign-in outcomes, rate-limit hits and queues', async () => {
    await call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey });
    await call(app, 'GET', '/api/v1/users/usr_nobody', { token: ws.apiKey });
    await login(app, ws.id, ws.owner.email, ws.owner.password);
    const ip = someIp();
    for (let i = 0; i < 11; i++) await login(app, ws.id, ws.owner.email, 'a wrong password', ip);
    const text = await scrape();
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/users\/\{id\}",status="200"\} 1/);
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/users\/\{id\}",status="404"\} 1/);
    expect(text).toMatch(/http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/api\/v1\/users\/\{id\}",status="200"\}/);
    expect(text).toMatch(/sign_in_attempts_total\{outcome="success"\} 1/);
    expect(text).toMatch(/sign_in_attempts_total\{outcome="INVALID_CREDENTIALS"\} 10/);
    expect(text).toMatch(/rate_limit_hits_total\{limit="login"\} 1/);
    expect(text).toMatch(/webhook_deliveries_pending \d+/);
    expect(text).toMatch(/emails_pending \d+/);
    expect(text).toMatch(/process_resident_memory_bytes \d+/);
    expect(text).not.toContain(ws.owner.id); // raw paths never become labels
  });

  it('counts paths no route matched under one label, however many there are', async () => {
    for (let i = 0; i < 5; i++) await call(app, 'GET', `/made-up-${i}/x`);
    const text = await scrape();
    expect(text).not.toContain('made-up');
    expect(text).toMatch(/http_requests_total\{method="GET",route="\(unmatched\)",status="404"\} 5$/m);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('does not exist', async () => {
    expect((await call(app, 'GET', '/metrics')).status).toBe(404);
  });
});
