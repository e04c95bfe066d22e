import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, someIp } from './helpers/auth.ts';
import { basicAuth, call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/** The three `RateLimit-*` headers of an answer, and its `Retry-After`. */
function standing(headers: Headers) {
  return {
    limit: headers.get('ratelimit-limit'),
    remaining: headers.get('ratelimit-remaining'),
    reset: Number(headers.get('ratelimit-reset')),
    retryAfter: headers.get('retry-after'),
  };
}

describe('RateLimit-* on answers a limit admitted', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('a sign-in, admitted or refused for its password, says how many of the 10 attempts are left', async () => {
    const ip = someIp();
    const first = await login(app, ws.id, ws.owner.email, ws.owner.password, ip);
    expect(first.status).toBe(200);
    expect(standing(first.headers)).toMatchObject({ limit: '10', remaining: '9', retryAfter: null });
    expect(standing(first.headers).reset).toBeGreaterThan(0);
    expect(standing(first.headers).reset).toBeLessThanOrEqual(60);
    const wrong = await login(app, ws.id, uniqueEmail('nobody'), 'password guess', ip);
    expect(wrong.status).toBe(401);
    expect(standing(wrong.headers)).toMatchObject({ limit: '10', remaining: '8', retryAfter: null });
  });

  it('a sign-in through the tRPC door says the same, not the 1,000 of the global limit', async () => {
    const res = await call(app, 'POST', '/trpc/auth.login', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
      body: { email: ws.owner.email, password: ws.owner.password },
    });
    expect(res.status).toBe(200);
    expect(standing(res.headers)).toMatchObject({ limit: '10', remaining: '9', retryAfter: null });
  });

  it('a password call says where it stands against the 10 a minute of /auth/password/*', async () => {
    const res = await call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
      body: { email: uniqueEmail('forgot') },
    });
    expect(res.status).toBe(200);
    expect(standing(res.headers)).toMatchObject({ limit: '10', remaining: '9', retryAfter: null });
  });

  it('any other call says where it stands against the 1,000 a minute per IP', async () => {
    const res = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey, headers: { 'x-forwarded-for': someIp() } });
    expect(res.status).toBe(200);
    expect(standing(res.headers)).toMatchObject({ limit: '1000', remaining: '999', retryAfter: null });
  });

  it('a token request says where it stands against the 60 a minute of /oauth/token', async () => {
    const created = await call(app, 'POST', '/api/v1/applications', { token: ws.apiKey, body: { name: 'Backend', type: 'm2m' } });
    expect(created.status).toBe(201);
    const res = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuth(created.body.data.client_id, created.body.data.client_secret),
        'x-forwarded-for': someIp(),
      },
      body: new URLSearchParams({ grant_type: 'client_credentials' }),
    });
    expect(res.status).toBe(200);
    expect(standing(res.headers)).toMatchObject({ limit: '60', remaining: '59', retryAfter: null });
  });
});
