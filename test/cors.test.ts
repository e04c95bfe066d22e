import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from './helpers/app.ts';
import { someIp } from './helpers/auth.ts';
import { call, type ApiResponse } from './helpers/http.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

const SPA = 'https://spa.example.com';
const ELSEWHERE = 'https://evil.example.net';

function preflight(app: TestApp, path: string, origin: string, method = 'POST') {
  return call(app, 'OPTIONS', path, {
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization, content-type, x-tenant-id',
    },
  });
}

function corsOf(res: ApiResponse) {
  return {
    origin: res.headers.get('access-control-allow-origin'),
    methods: res.headers.get('access-control-allow-methods'),
    credentials: res.headers.get('access-control-allow-credentials'),
  };
}

describe('CORS on /api/v1 with CORS_ALLOWED_ORIGINS', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ CORS_ALLOWED_ORIGINS: `${SPA}, http://localhost:5173/` });
    ws = await createWorkspace(app, 'Cors');
  });
  afterAll(() => app.close());

  it('answers a preflight from an allowed origin 204 with the path’s methods, the headers clients send, and no credentials', async () => {
    const login = await preflight(app, '/api/v1/auth/login', SPA);
    expect(login.status).toBe(204);
    expect(corsOf(login)).toEqual({ origin: SPA, methods: 'POST, OPTIONS', credentials: null });
    expect(login.headers.get('allow')).toBe('POST, OPTIONS');
    expect(login.headers.get('vary')).toContain('Origin');
    expect(login.headers.get('access-control-max-age')).toBe('7200');
    const allowedHeaders = (login.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(', ');
    expect(allowedHeaders).toEqual(expect.arrayContaining(['authorization', 'content-type', 'x-tenant-id', 'x-request-id']));

    const item = await preflight(app, `/api/v1/users/${ws.owner.id}/`, 'http://localhost:5173', 'PATCH');
    expect(item.status).toBe(204);
    expect(item.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(item.headers.get('access-control-allow-methods')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH']);
  });

  it('gives another origin no CORS header (the browser refuses), and a plain OPTIONS 204 with Allow; an unknown path stays 404', async () => {
    const other = await preflight(app, '/api/v1/auth/login', ELSEWHERE);
    expect(other.status).toBe(204);
    expect(corsOf(other)).toEqual({ origin: null, methods: null, credentials: null });
    expect(other.headers.get('allow')).toBe('POST, OPTIONS');
    const prefixOfAllowed = await preflight(app, '/api/v1/auth/login', `${SPA}.evil.example.net`);
    expect(corsOf(prefixOfAllowed).origin).toBeNull();

    const plain = await call(app, 'OPTIONS', '/api/v1/users');
    expect([plain.status, plain.headers.get('allow'), corsOf(plain).origin]).toEqual([204, 'GET, POST, HEAD, OPTIONS', null]);
    const unknown = await preflight(app, '/api/v1/no-such-thing', SPA);
    expect([unknown.status, unknown.body]).toEqual([
      404,
      expect.objectContaining({ error: expect.objectContaining({ code: 'NOT_FOUND' }) }),
    ]);
  });

  it('lets an allowed origin read every answer, errors included, with X-Request-ID and the limits exposed; others read none', async () => {
    const list = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey, headers: { origin: SPA } });
    expect([list.status, list.headers.get('access-control-allow-origin')]).toEqual([200, SPA]);
    const exposed = (list.headers.get('access-control-expose-headers') ?? '').split(', ');
    expect(exposed).toEqual(
      expect.arrayContaining(['X-Request-ID', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
    );
    expect(list.headers.get('vary')).toContain('Origin');

    const unauthenticated = await call(app, 'GET', '/api/v1/users', { headers: { origin: SPA } });
    expect([unauthenticated.status, unauthenticated.headers.get('access-control-allow-origin')]).toEqual([401, SPA]);
    const wrongMethod = await call(app, 'PUT', '/api/v1/users', { headers: { origin: SPA }, body: {} });
    expect([wrongMethod.status, wrongMethod.headers.get('access-control-allow-origin')]).toEqual([405, SPA]);
    const badJson = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, headers: { origin: SPA }, raw: '{"email":' });
    expect([badJson.status, badJson.headers.get('access-control-allow-origin')]).toEqual([400, SPA]);

    const other = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey, headers: { origin: ELSEWHERE } });
    expect([other.status, corsOf(other).origin, other.headers.get('access-control-expose-headers')]).toEqual([200, null, null]);
  });

  it('lets an allowed origin read a 429 and its Retry-After', async () => {
    const ip = someIp();
    let limited: ApiResponse | undefined;
    for (let i = 0; i < 12 && limited === undefined; i++) {
      const res = await call(app, 'POST', '/api/v1/auth/login', {
        headers: { origin: SPA, 'x-tenant-id': ws.id, 'x-forwarded-for': ip },
        body: { email: ws.owner.email, password: 'not the passphrase' },
      });
      if (res.status === 429) limited = res;
    }
    expect(limited?.headers.get('access-control-allow-origin')).toBe(SPA);
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('never answers CORS on /platform/v1 (the operator token stays out of browsers), but answers its OPTIONS', async () => {
    const platform = await preflight(app, '/platform/v1/workspaces', SPA);
    expect([platform.status, platform.headers.get('allow'), corsOf(platform).origin]).toEqual([204, 'POST, OPTIONS', null]);
    const created = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, headers: { origin: SPA }, body: {} });
    expect(created.status).toBe(400);
    expect(corsOf(created).origin).toBeNull();
  });

  it('does not count preflights against the per-IP limit of 1,000 a minute, and lets the origin read the limit’s 429', async () => {
    const ip = someIp();
    const headers = { origin: SPA, 'access-control-request-method': 'POST', 'x-forwarded-for': ip };
    for (let batch = 0; batch < 11; batch++) {
      const answers = await Promise.all(Array.from({ length: 100 }, () => call(app, 'OPTIONS', '/api/v1/auth/login', { headers })));
      expect(answers.every((a) => a.status === 204)).toBe(true);
    }
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, () => call(app, 'GET', '/api/v1/users', { headers: { origin: SPA, 'x-forwarded-for': ip } })),
      );
      statuses.push(...answers.map((a) => a.status));
    }
    expect(statuses.every((status) => status === 401)).toBe(true);
    const limited = await call(app, 'GET', '/api/v1/users', { headers: { origin: SPA, 'x-forwarded-for': ip } });
    expect([limited.status, limited.headers.get('access-control-allow-origin')]).toEqual([429, SPA]);
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('leaves the protocol endpoints’ CORS as they answer it: public, readable from any origin', async () => {
    const jwks = await call(app, 'OPTIONS', '/.well-known/jwks.json', { headers: { origin: ELSEWHERE } });
    expect([jwks.status, corsOf(jwks).origin]).toEqual([204, '*']);
    const discovery = await call(app, 'GET', '/.well-known/openid-configuration', { headers: { origin: ELSEWHERE } });
    // oidc-provider reflects the origin of its public answers.
    expect([discovery.status, corsOf(discovery).origin]).toEqual([200, ELSEWHERE]);
    const token = await preflight(app, '/oauth/token', ELSEWHERE);
    expect([token.status, corsOf(token).origin]).toEqual([204, ELSEWHERE]);
  });
});

describe('CORS on /api/v1 by default and with *', () => {
  let app: TestApp;
  let anyOrigin: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
    anyOrigin = await startTestApp({ CORS_ALLOWED_ORIGINS: '*' });
  });
  afterAll(async () => {
    await app.close();
    await anyOrigin.close();
  });

  it('answers no origin CORS when CORS_ALLOWED_ORIGINS is unset: same-origin only', async () => {
    const pre = await preflight(app, '/api/v1/auth/login', SPA);
    expect([pre.status, pre.headers.get('allow'), corsOf(pre).origin, corsOf(pre).methods]).toEqual([204, 'POST, OPTIONS', null, null]);
    const res = await call(app, 'GET', '/api/v1/users', { headers: { origin: SPA } });
    expect([res.status, corsOf(res).origin, res.headers.get('vary')]).toEqual([401, null, null]);
  });

  it('answers * to every origin with CORS_ALLOWED_ORIGINS=*, without Vary: Origin', async () => {
    const pre = await preflight(anyOrigin, '/api/v1/auth/refresh', ELSEWHERE);
    expect([pre.status, corsOf(pre).origin, corsOf(pre).methods, corsOf(pre).credentials]).toEqual([204, '*', 'POST, OPTIONS', null]);
    const res = await call(anyOrigin, 'GET', '/api/v1/users', { headers: { origin: 'null' } });
    expect([res.status, corsOf(res).origin, res.headers.get('vary')]).toEqual([401, '*', null]);
  });
});

describe('CORS_ALLOWED_ORIGINS', () => {
  const parse = (value: string) => loadConfig({ CORS_ALLOWED_ORIGINS: value }).CORS_ALLOWED_ORIGINS;

  it('takes exact origins, comma-separated (a trailing slash is dropped), or * alone', () => {
    expect(parse(' https://a.example.com , http://localhost:5173/ ')).toEqual(new Set(['https://a.example.com', 'http://localhost:5173']));
    expect(parse('*')).toBe('*');
    expect(loadConfig({}).CORS_ALLOWED_ORIGINS).toBeUndefined();
  });

  it('refuses what a browser never sends as Origin, and * among others', () => {
    for (const value of [
      'https://a.example.com/app',
      'https://A.example.com',
      'https://a.example.com:443',
      'a.example.com',
      'ftp://a.example.com',
      'null',
      '*, https://a.example.com',
      'https://a.example.com?x=1',
    ]) {
      expect(() => parse(value), value).toThrow(/CORS_ALLOWED_ORIGINS/);
    }
  });
});
