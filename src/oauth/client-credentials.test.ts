import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { someIp } from '../../test/helpers/auth.ts';
import { basicAuth, call } from '../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../test/helpers/workspace.ts';

/** How a client library call failed: status and RFC 6749 `error`, from the body or the WWW-Authenticate challenge. */
async function failure(promise: Promise<unknown>): Promise<{ status: number; error: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError) return { status: error.status, error: error.error };
    if (error instanceof oidc.WWWAuthenticateChallengeError) {
      const body = await error.response.json();
      return { status: error.status, error: body.error };
    }
    throw error;
  }
  throw new Error('expected the call to fail');
}

interface M2m {
  id: string;
  secret: string;
}

/** Machine-to-machine applications: client credentials, secret rotation and deletion, from a real client library. */
describe('client credentials with openid-client', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function m2m(name = 'Backend'): Promise<M2m> {
    const res = await call(app, 'POST', '/api/v1/applications', { token: ws.apiKey, body: { name, type: 'm2m' } });
    expect(res.status).toBe(201);
    return { id: res.body.data.id, secret: res.body.data.client_secret };
  }

  function client(id: string, auth: oidc.ClientAuth, ip = someIp()): Promise<oidc.Configuration> {
    return oidc.discovery(new URL(app.url), id, undefined, auth, {
      execute: [oidc.allowInsecureRequests],
      [oidc.customFetch]: (url, options) =>
        fetch(url, { ...options, body: options.body as RequestInit['body'], headers: { ...options.headers, 'x-forwarded-for': ip } }),
    });
  }

  /** A raw token request, to read statuses and headers as they are on the wire. */
  function tokenRequest(body: Record<string, string>, headers: Record<string, string> = {}, ip = someIp()) {
    return fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip, ...headers },
      body: new URLSearchParams(body).toString(),
    });
  }

  async function auditRows(eventType: string, targetId: string) {
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ outcome: string; details: Record<string, unknown> }[]>(
        'select outcome, details from audit_events where workspace_id = ? and event_type = ? and target_id = ? order by created_at',
        [ws.id, eventType, targetId],
      );
    return rows;
  }

  it('issues tokens with client_secret_basic and client_secret_post; introspection sees them', async () => {
    const backend = await m2m();
    for (const auth of [oidc.ClientSecretBasic(backend.secret), oidc.ClientSecretPost(backend.secret)]) {
      const config = await client(backend.id, auth);
      const tokens = await oidc.clientCredentialsGrant(config);
      // Opaque, not a JWS: signed with no key, so a revoked key leaves these tokens alone.
      expect(tokens.access_token).toMatch(/^[\w-]{43}$/);
      expect(tokens.token_type.toLowerCase()).toBe('bearer');
      expect(tokens.expires_in).toBe(app.deps.config.ACCESS_TOKEN_TTL);
      expect(tokens.refresh_token).toBeUndefined();
      expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, client_id: backend.id });
    }
  });

  it("grants no user's scope: openid, profile, email and offline_access asked for are dropped, not echoed", async () => {
    const backend = await m2m();
    const res = await tokenRequest(
      { grant_type: 'client_credentials', scope: 'openid profile email offline_access' },
      { authorization: basicAuth(backend.id, backend.secret) },
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.scope).toBe('');
    expect(body).not.toHaveProperty('id_token');
    const config = await client(backend.id, oidc.ClientSecretBasic(backend.secret));
    const introspected = await oidc.tokenIntrospection(config, body.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: backend.id });
    expect(introspected.scope ?? '').toBe('');
  });

  it('answers in RFC 6749 shape: no-store, X-Request-ID, form or JSON bodies', async () => {
    const backend = await m2m();
    const form = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basicAuth(backend.id, backend.secret), 'x-request-id': 'cc-form-1' },
    );
    expect(form.status).toBe(200);
    expect(form.headers.get('cache-control')).toBe('no-store');
    expect(form.headers.get('pragma')).toBe('no-cache');
    expect(form.headers.get('x-request-id')).toBe('cc-form-1');
    const body = await form.json();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);

    const json = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: backend.id, client_secret: backend.secret }),
    });
    expect(json.status).toBe(200);
    expect((await json.json()).access_token).toBeTruthy();

    const broken = await fetch(`${app.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
      body: '{"grant_type": ',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).error).toBe('invalid_request');
    expect(broken.headers.get('x-request-id')).toBeTruthy();

    const unsupported = await tokenRequest(
      { grant_type: 'password', username: 'a', password: 'b' },
      { authorization: basicAuth(backend.id, backend.secret) },
    );
    expect(unsupported.status).toBe(400);
    expect(await unsupported.json()).toMatchObject({ error: expect.stringMatching(/^(unsupported_grant_type|unauthorized_client)$/) });
  });

  it('refuses a wrong secret (401 invalid_client), audited; an unknown client too', async () => {
    const backend = await m2m();
    const config = await client(backend.id, oidc.ClientSecretBasic(`${backend.secret}x`));
    expect(await failure(oidc.clientCredentialsGrant(config))).toEqual({ status: 401, error: 'invalid_client' });

    const raw = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basicAuth(backend.id, 'cs_wrong') });
    expect(raw.status).toBe(401);
    const body = await raw.json();
    expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
    expect(body.error).toBe('invalid_client');
    expect(raw.headers.get('www-authenticate')).toMatch(/^Basic/);

    const unknown = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basicAuth('app_00000000000000000000000000', 'cs_x') },
    );
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error).toBe('invalid_client');

    await expect.poll(async () => (await auditRows('oauth.token', backend.id)).length).toBeGreaterThanOrEqual(2);
    const [row] = await auditRows('oauth.token', backend.id);
    expect(row).toMatchObject({ outcome: 'failure', details: { error: 'invalid_client', grant_type: 'client_credentials' } });
  });

  it('rotation: the old secret fails at once, the new one works', async () => {
    const backend = await m2m();
    const before = await client(backend.id, oidc.ClientSecretBasic(backend.secret));
    const early = await oidc.clientCredentialsGrant(before);
    const rotated = await call(app, 'POST', `/api/v1/applications/${backend.id}/rotate-secret`, { token: ws.apiKey });
    expect(rotated.status).toBe(200);
    expect(await failure(oidc.clientCredentialsGrant(before))).toEqual({ status: 401, error: 'invalid_client' });
    const after = await client(backend.id, oidc.ClientSecretPost(rotated.body.data.client_secret));
    expect((await oidc.clientCredentialsGrant(after)).access_token).toBeTruthy();
    // Tokens already issued stay valid until they expire.
    expect((await oidc.tokenIntrospection(after, early.access_token)).active).toBe(true);
    expect((await auditRows('application.rotate_secret', backend.id))[0]?.outcome).toBe('success');
  });

  it('deletion: the client fails at once and its tokens stop introspecting active', async () => {
    const backend = await m2m('Doomed');
    const resourceServer = await m2m('Resource server');
    const config = await client(backend.id, oidc.ClientSecretBasic(backend.secret));
    const tokens = await oidc.clientCredentialsGrant(config);
    const checker = await client(resourceServer.id, oidc.ClientSecretBasic(resourceServer.secret));
    expect((await oidc.tokenIntrospection(checker, tokens.access_token)).active).toBe(true);

    expect((await call(app, 'DELETE', `/api/v1/applications/${backend.id}`, { token: ws.apiKey })).status).toBe(200);
    expect(await failure(oidc.clientCredentialsGrant(config))).toEqual({ status: 401, error: 'invalid_client' });
    expect((await oidc.tokenIntrospection(checker, tokens.access_token)).active).toBe(false);
  });

  it('lets only clients of the token’s workspace introspect it', async () => {
    const backend = await m2m();
    const tokens = await oidc.clientCredentialsGrant(await client(backend.id, oidc.ClientSecretBasic(backend.secret)));
    const foreign = await createWorkspace(app);
    const theirs = await call(app, 'POST', '/api/v1/applications', { token: foreign.apiKey, body: { name: 'Theirs', type: 'm2m' } });
    const outsider = await client(theirs.body.data.id, oidc.ClientSecretBasic(theirs.body.data.client_secret));
    expect((await oidc.tokenIntrospection(outsider, tokens.access_token)).active).toBe(false);
  });

  it('a web application (it keeps a secret) may act as itself too: the token names no user and opens no API', async () => {
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Portal', type: 'web', redirect_uris: ['https://portal.example.com/callback'] },
    });
    expect(created.body.data.grant_types).toEqual(['authorization_code', 'refresh_token', 'client_credentials']);
    const web = { id: created.body.data.id as string, secret: created.body.data.client_secret as string };
    const config = await client(web.id, oidc.ClientSecretBasic(web.secret));
    const tokens = await oidc.clientCredentialsGrant(config);
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: app.deps.config.ACCESS_TOKEN_TTL });
    expect(tokens.refresh_token).toBeUndefined();
    const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(introspected).toMatchObject({ active: true, client_id: web.id });
    expect(introspected.sub).toBeUndefined();
    // What an m2m token is: no user, so no userinfo, and not a credential of the management API.
    for (const path of ['/api/v1/users', '/api/v1/applications']) {
      const refused = await call(app, 'GET', path, { token: tokens.access_token });
      expect([refused.status, refused.body.error.code], path).toEqual([401, 'INVALID_TOKEN']);
    }
    const userinfo = await fetch(`${app.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(401);
    // Without its secret it is refused, as any confidential client is.
    const wrong = await client(web.id, oidc.ClientSecretBasic(`${web.secret}x`));
    expect(await failure(oidc.clientCredentialsGrant(wrong))).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('limits /oauth/token to 60 a minute per IP: 429 RATE_LIMITED with Retry-After and RateLimit-*', async () => {
    const ip = someIp();
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      statuses.push(
        (await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basicAuth('app_00000000000000000000000000', 'x') }, ip))
          .status,
      );
    }
    expect(statuses.every((s) => s === 401)).toBe(true);
    const limited = await tokenRequest({ grant_type: 'client_credentials' }, {}, ip);
    expect(limited.status).toBe(429);
    expect(await limited.json()).toEqual({ error: 'RATE_LIMITED', error_description: expect.any(String) });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('pragma')).toBe('no-cache');
    expect(limited.headers.get('ratelimit-limit')).toBe('60');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-request-id')).toBeTruthy();
    expect((await tokenRequest({ grant_type: 'client_credentials' }, {}, someIp())).status).not.toBe(429);
  });
});
