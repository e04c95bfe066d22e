import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { signIn, someIp } from '../../test/helpers/auth.ts';
import { basicAuth, call } from '../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../test/helpers/workspace.ts';

const CALLBACK = 'https://rp.example.com/callback';
const SPA_CALLBACK = 'http://localhost:5173/callback';
const CLIENT_AUTH_PATHS = ['/oauth/token', '/oauth/introspect', '/oauth/revoke'] as const;

interface Client {
  id: string;
  secret: string;
}

/** RFC 6749 §5 on the wire: the error codes and statuses of §5.2, the headers and members of §5.1. */
describe('RFC 6749 at the client-authenticating endpoints', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let m2m: Client;
  let nativeId: string;
  let spaId: string;

  async function register(body: object): Promise<Client> {
    const res = await call(app, 'POST', '/api/v1/applications', { token: ws.apiKey, body });
    expect(res.status).toBe(201);
    return { id: res.body.data.id, secret: res.body.data.client_secret };
  }

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    m2m = await register({ name: 'Backend', type: 'm2m' });
    nativeId = (await register({ name: 'Phone', type: 'native', redirect_uris: ['com.example.app:/callback'] })).id;
    spaId = (await register({ name: 'SPA', type: 'spa', redirect_uris: [SPA_CALLBACK] })).id;
  });
  afterAll(() => app.close());

  function post(path: string, body: Record<string, string>, headers: Record<string, string> = {}) {
    return fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': someIp(), ...headers },
      body: new URLSearchParams(body).toString(),
    });
  }

  /** The body each endpoint needs besides client authentication. */
  const request = (path: (typeof CLIENT_AUTH_PATHS)[number]): Record<string, string> =>
    path === '/oauth/token' ? { grant_type: 'client_credentials' } : { token: 'not-a-token' };

  async function expectInvalidClient(res: Response, label: string) {
    expect(res.status, label).toBe(401);
    expect(await res.json(), label).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    expect(res.headers.get('www-authenticate'), label).toMatch(/^Basic realm="/);
  }

  async function auditErrors(clientId: string): Promise<unknown[]> {
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ details: { error: string } }[]>(
        "select details from audit_events where workspace_id = ? and event_type = 'oauth.token' and target_id = ?",
        [ws.id, clientId],
      );
    return rows.map((row) => row.details.error);
  }

  it('no client authentication at all is 401 invalid_client with WWW-Authenticate: Basic (was 400 invalid_request)', async () => {
    for (const path of CLIENT_AUTH_PATHS) {
      await expectInvalidClient(await post(path, request(path)), `${path} without credentials`);
      const json = await fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
        body: JSON.stringify(request(path)),
      });
      await expectInvalidClient(json, `${path} JSON without credentials`);
      await expectInvalidClient(await post(path, request(path), { authorization: basicAuth(m2m.id, '') }), `${path} Basic, empty secret`);
      // A confidential client naming itself without its secret (already invalid_client).
      await expectInvalidClient(await post(path, { ...request(path), client_id: m2m.id }), `${path} client_id alone`);
    }
    // Still a malformed request: two authentication mechanisms at once (§5.2 invalid_request).
    const both = await post(
      '/oauth/token',
      { grant_type: 'client_credentials', client_secret: m2m.secret },
      { authorization: basicAuth(m2m.id, m2m.secret) },
    );
    expect(both.status).toBe(400);
    expect((await both.json()).error).toBe('invalid_request');
  });

  it('an Authorization header that is no Basic client credentials is 401 invalid_client with WWW-Authenticate: Basic (was 400 invalid_request)', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const unreadable = {
      'another scheme': 'Bearer some-access-token',
      Digest: 'Digest username="x"',
      'Basic, not base64': 'Basic %%%',
      'Basic, no colon': `Basic ${b64(m2m.id)}`,
      'Basic, broken form encoding': `Basic ${b64(`${m2m.id}:%zz`)}`,
      'Basic, three parts': `Basic ${b64(`${m2m.id}:x`)} extra`,
    };
    for (const path of CLIENT_AUTH_PATHS) {
      for (const [label, authorization] of Object.entries(unreadable)) {
        await expectInvalidClient(await post(path, request(path), { authorization }), `${path} ${label}`);
      }
    }
    // Readable credentials with a malformed request stay invalid_request (§5.2).
    const noGrantType = await post('/oauth/token', {}, { authorization: basicAuth(m2m.id, m2m.secret) });
    expect(noGrantType.status).toBe(400);
    expect((await noGrantType.json()).error).toBe('invalid_request');
    // The right secret still works, form-encoded as RFC 6749 §2.3.1 asks.
    expect((await post('/oauth/token', request('/oauth/token'), { authorization: basicAuth(m2m.id, m2m.secret) })).status).toBe(200);
  });

  it('takes credentials more than one space after the scheme (RFC 9110 §11.4: 1*SP), at every client-authenticating endpoint', async () => {
    const credentials = basicAuth(m2m.id, m2m.secret).replace('Basic ', 'Basic   ');
    for (const path of CLIENT_AUTH_PATHS) {
      const res = await post(path, request(path), { authorization: credentials });
      expect(res.status, path).toBe(200);
    }
  });

  it('a public client is identified by its client_id alone', async () => {
    const code = await post('/oauth/token', {
      grant_type: 'authorization_code',
      client_id: spaId,
      code: 'not-a-code',
      redirect_uri: SPA_CALLBACK,
      code_verifier: 'v'.repeat(43),
    });
    expect(code.status).toBe(400);
    expect((await code.json()).error).toBe('invalid_grant');
    const introspected = await post('/oauth/introspect', { client_id: spaId, token: 'not-a-token' });
    expect(introspected.status).toBe(200);
    expect(await introspected.json()).toEqual({ active: false });
  });

  it('a grant type the client is not registered for is 400 unauthorized_client (was invalid_request), audited so', async () => {
    const backend = await register({ name: 'Backend, wrong grants', type: 'm2m' });
    const cases: [string, Record<string, string>, Record<string, string>][] = [
      [
        'm2m, authorization_code',
        { grant_type: 'authorization_code', code: 'x', redirect_uri: CALLBACK },
        { authorization: basicAuth(backend.id, backend.secret) },
      ],
      ['m2m, refresh_token', { grant_type: 'refresh_token', refresh_token: 'x', client_id: backend.id, client_secret: backend.secret }, {}],
      ['spa, client_credentials', { grant_type: 'client_credentials', client_id: spaId }, {}],
      ['native, client_credentials', { grant_type: 'client_credentials', client_id: nativeId }, {}],
    ];
    for (const [label, body, headers] of cases) {
      const res = await post('/oauth/token', body, headers);
      expect(res.status, label).toBe(400);
      expect(await res.json(), label).toEqual({ error: 'unauthorized_client', error_description: expect.any(String) });
    }
    await expect.poll(() => auditErrors(backend.id)).toEqual(['unauthorized_client', 'unauthorized_client']);
  });

  it('introspecting a JWT it did not issue as a token (the API’s access token) is active: false, not an error (RFC 7662 §2.2)', async () => {
    const { accessToken } = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const res = await post('/oauth/introspect', { token: accessToken }, { authorization: basicAuth(m2m.id, m2m.secret) });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await res.json()).toEqual({ active: false });
    // The client is still authenticated first; revocation keeps RFC 7009's unsupported_token_type.
    await expectInvalidClient(
      await post('/oauth/introspect', { token: accessToken }, { authorization: basicAuth(m2m.id, 'wrong') }),
      'introspect',
    );
    const revoke = await post('/oauth/revoke', { token: accessToken }, { authorization: basicAuth(m2m.id, m2m.secret) });
    expect([revoke.status, (await revoke.json()).error]).toEqual([400, 'unsupported_token_type']);
  });

  it('a token response names its scope ("" when none) and says Pragma: no-cache beside Cache-Control: no-store', async () => {
    const res = await post('/oauth/token', { grant_type: 'client_credentials' }, { authorization: basicAuth(m2m.id, m2m.secret) });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(body.scope).toBe('');

    const refused = await post('/oauth/token', { grant_type: 'client_credentials' });
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('pragma')).toBe('no-cache');
    const malformed = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
      body: '{"grant_type": ',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('pragma')).toBe('no-cache');
    // A method the provider routes nowhere passes the middleware untouched (no route, no ctx.oidc).
    expect((await fetch(`${app.url}/oauth/token`)).status).toBeLessThan(500);
  });

  it("a browser app can read the refusals the service writes itself: CORS on the 429, an unreadable body's 400 and the 405", async () => {
    const origin = 'http://localhost:5173';
    const ip = someIp();
    // The provider's own answer to the SPA's origin (registered through its redirect URI), for comparison.
    const provider = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: spaId }, { origin });
    expect([provider.status, provider.headers.get('access-control-allow-origin')]).toEqual([400, origin]);

    for (let i = 0; i < 60; i++) {
      await post(
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: spaId },
        { origin, 'x-forwarded-for': ip },
      );
    }
    const limited = await post(
      '/oauth/token',
      { grant_type: 'refresh_token', refresh_token: 'unknown', client_id: spaId },
      { origin, 'x-forwarded-for': ip },
    );
    expect(limited.status).toBe(429);
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await limited.json()).toEqual({ error: 'RATE_LIMITED', error_description: expect.any(String) });

    const malformed = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp(), origin },
      body: '{"grant_type": ',
    });
    expect([malformed.status, malformed.headers.get('access-control-allow-origin')]).toEqual([400, '*']);
    const wrongMethod = await fetch(`${app.url}/oauth/token`, { headers: { 'x-forwarded-for': someIp(), origin } });
    expect([wrongMethod.status, wrongMethod.headers.get('access-control-allow-origin')]).toEqual([405, '*']);
  });

  it('answers every refusal of revocation, introspection and the token endpoint with Cache-Control: no-store and Pragma: no-cache', async () => {
    const refusals: [string, Response][] = [];
    for (const path of CLIENT_AUTH_PATHS) {
      refusals.push([`${path} without client`, await post(path, request(path))]);
      refusals.push([`${path} wrong secret`, await post(path, request(path), { authorization: basicAuth(m2m.id, 'wrong') })]);
      refusals.push([`${path} no token`, await post(path, {}, { authorization: basicAuth(m2m.id, m2m.secret) })]);
      refusals.push([
        `${path} malformed JSON`,
        await fetch(`${app.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
          body: '{',
        }),
      ]);
    }
    for (const [label, res] of refusals) {
      expect(res.status, label).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('cache-control'), label).toBe('no-store');
      expect(res.headers.get('pragma'), label).toBe('no-cache');
    }
  });

  it('a gzip-encoded body is 400 invalid_request, not a client that failed to authenticate (RFC 6749 §5.2)', async () => {
    const { gzipSync } = await import('node:zlib');
    for (const path of CLIENT_AUTH_PATHS) {
      const body = gzipSync(new URLSearchParams({ ...request(path), client_id: m2m.id, client_secret: m2m.secret }).toString());
      const res = await fetch(`${app.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip', 'x-forwarded-for': someIp() },
        body,
      });
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('pragma'), path).toBe('no-cache');
    }
  });

  it('discovery names the client authentication revocation and introspection take, and each one named works there', async () => {
    const doc = await (await fetch(`${app.url}/.well-known/openid-configuration`)).json();
    const methods = ['client_secret_basic', 'client_secret_post', 'none'];
    // RFC 8414 §2: omitted, each would mean client_secret_basic alone.
    expect(doc.revocation_endpoint_auth_methods_supported).toEqual(methods);
    expect(doc.introspection_endpoint_auth_methods_supported).toEqual(methods);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(methods);
    for (const path of ['/oauth/revoke', '/oauth/introspect']) {
      const basic = await post(path, { token: 'not-a-token' }, { authorization: basicAuth(m2m.id, m2m.secret) });
      const postAuth = await post(path, { token: 'not-a-token', client_id: m2m.id, client_secret: m2m.secret });
      const none = await post(path, { token: 'not-a-token', client_id: spaId });
      expect([basic.status, postAuth.status, none.status], path).toEqual([200, 200, 200]);
    }
  });
});
