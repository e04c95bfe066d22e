import { createHash, randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { createServer, request, type Server } from 'node:http';
import { hostname } from 'node:os';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn, someIp } from '../../../test/helpers/auth.ts';
import { call as send, type CallOptions } from '../../../test/helpers/http.ts';
import { startFakeDiscovery, type DiscoveryFault, type EndpointFault, type FakeDiscovery } from '../../../test/helpers/fake-discovery.ts';
import { startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { authenticatorOf, codeAt } from '../../../test/helpers/authenticator.ts';

/**
 * Every path under /api/v1/auth/oauth/ counts toward one 30-per-minute budget per address: each call
 * comes from an address of its own unless the test names one, so the file's calls do not add up.
 */
function call(app: TestApp, method: string, path: string, opts: CallOptions = {}) {
  return send(app, method, path, { ...opts, headers: { 'x-forwarded-for': someIp(), ...opts.headers } });
}

describe('social sign-in through a generic OpenID provider', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let idp: TestIdp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_IDP_TARGETS: 'true' });
    ws = await createWorkspace(app, 'Social');
    base = app.deps.config.BASE_URL;
    idp = await startTestIdp([
      { client_id: 'identity-service', client_secret: 'idp-client-secret', redirect_uris: [`${base}/api/v1/auth/oauth/oidc/callback`] },
    ]);
    const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'identity-service', client_secret: 'idp-client-secret', issuer: idp.issuer, display_name: 'Acme ID' },
    });
    expect(put.status).toBe(201);
  });
  afterAll(async () => {
    await idp.close();
    await app.close();
  });

  /** The app's side of a URL on BASE_URL (the test server listens elsewhere). */
  const onApp = (url: string | URL) => {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  };

  async function start(ip = someIp()) {
    const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`, { headers: { 'x-forwarded-for': ip } });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location') as string);
  }

  async function throughProvider(email: string, claims: Record<string, unknown> = {}, tamper?: (url: URL) => void) {
    const authorize = await start();
    tamper?.(authorize);
    idp.signInAs({ sub: `sub-${email}`, claims: { email, email_verified: true, ...claims } });
    const callback = await idp.authorize(authorize.href);
    expect(callback.href.startsWith(`${base}/api/v1/auth/oauth/oidc/callback?`)).toBe(true);
    const res = await call(app, 'GET', onApp(callback));
    return { callback, res, location: new URL(res.headers.get('location') ?? 'http://none/') };
  }

  it('shows the configuration with the secret masked, and lists the enabled provider publicly', async () => {
    const again = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'identity-service', issuer: idp.issuer, display_name: 'Acme ID' },
    });
    expect(again.body.data).toMatchObject({
      provider: 'oidc',
      enabled: true,
      client_id: 'identity-service',
      client_secret: '••••cret',
      callback_url: `${base}/api/v1/auth/oauth/oidc/callback`,
    });
    expect(JSON.stringify(again.body)).not.toContain('idp-client-secret');
    const listed = await call(app, 'GET', '/api/v1/auth/oauth/providers', { headers: { 'x-tenant-id': ws.id } });
    expect(listed.body.data).toEqual([
      { provider: 'oidc', display_name: 'Acme ID', start_url: expect.stringContaining('/api/v1/auth/oauth/oidc/start') },
    ]);
    expect(listed.body.meta.total).toBe(1);
    expect((await call(app, 'GET', '/api/v1/auth/oauth/providers')).status).toBe(400);
    // Without the header, a credential names its workspace (a backend rendering sign-in buttons).
    const byKey = await call(app, 'GET', '/api/v1/auth/oauth/providers', { token: ws.apiKey });
    expect(byKey.status).toBe(200);
    expect(byKey.body.data).toEqual(listed.body.data);
    expect((await call(app, 'GET', '/api/v1/auth/oauth/providers', { token: 'sk_not_a_key' })).body.error.code).toBe('INVALID_TOKEN');
    // A provider the service does not know is no resource: 404, as for any path id that names nothing.
    const bad = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc2', {
      token: ws.apiKey,
      body: { client_id: 'x', client_secret: 'y' },
    });
    expect([bad.status, bad.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const noIssuer = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'x', client_secret: 'y' },
    });
    expect(noIssuer.status).toBe(400);
    for (const [provider, body, path] of [
      ['google', { client_id: 'g', client_secret: 's', issuer: 'https://accounts.example.com' }, 'issuer'],
      [
        'oidc',
        { client_id: 'o', client_secret: 's', issuer: idp.issuer, github_base_url: 'https://github.example.com' },
        'github_base_url',
      ],
      ['microsoft', { client_id: 'm' }, 'client_secret'],
    ] as const) {
      const res = await call(app, 'PUT', `/api/v1/auth/oauth/providers/${provider}`, { token: ws.apiKey, body });
      expect([res.status, res.body.error.code, res.body.error.details[0].path], provider).toEqual([400, 'BAD_REQUEST', path]);
    }
  });

  it('answers a PUT 201 when it creates the configuration and 200 when it replaces it; admins read it back, disabled too, without the secret', async () => {
    const own = await createWorkspace(app, 'Provider settings');
    const path = '/api/v1/auth/oauth/providers/github';
    const never = await call(app, 'GET', path, { token: own.apiKey });
    expect([never.status, never.body.error.code]).toEqual([404, 'NOT_FOUND']);

    const created = await call(app, 'PUT', path, {
      token: own.apiKey,
      body: { client_id: 'gh-client', client_secret: 'gh-secret-value', enabled: false },
    });
    expect([created.status, created.body.data.enabled]).toEqual([201, false]);
    const replaced = await call(app, 'PUT', path, { token: own.apiKey, body: { client_id: 'gh-client-2', enabled: false } });
    expect([replaced.status, replaced.body.data.client_id]).toEqual([200, 'gh-client-2']);

    const read = await call(app, 'GET', path, { token: own.apiKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      provider: 'github',
      display_name: 'GitHub',
      enabled: false,
      client_id: 'gh-client-2',
      client_secret_set: true,
      issuer: null,
      scopes: ['read:user', 'user:email'],
      callback_url: `${base}/api/v1/auth/oauth/github/callback`,
      updated_at: expect.any(String),
    });
    expect(JSON.stringify(read.body)).not.toContain('gh-secret');
    // The public list shows enabled providers only.
    expect((await call(app, 'GET', '/api/v1/auth/oauth/providers', { headers: { 'x-tenant-id': own.id } })).body.data).toEqual([]);

    // organizations:read, like the PUT's organizations:write; another workspace's key sees nothing.
    const email = uniqueEmail('member');
    await call(app, 'POST', '/api/v1/users', { token: own.apiKey, body: { email, password: 'member passphrase' } });
    const member = await signIn(app, own.id, email, 'member passphrase');
    expect((await call(app, 'GET', path, { token: member.accessToken })).status).toBe(403);
    expect((await call(app, 'GET', path)).status).toBe(401);
    expect((await call(app, 'GET', path, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', '/api/v1/auth/oauth/providers/gitlab', { token: own.apiKey })).status).toBe(404);
  });

  it('writes nothing for a PUT of the configuration it already has, the secret re-sent or left out; a new secret is written', async () => {
    const own = await createWorkspace(app, 'Provider no-op');
    const path = '/api/v1/auth/oauth/providers/github';
    const body = { client_id: 'gh-client', client_secret: 'gh-secret-value', enabled: true };
    const created = await call(app, 'PUT', path, { token: own.apiKey, body });
    expect(created.status).toBe(201);
    const saves = async () =>
      (await call(app, 'GET', '/api/v1/audit/events/?event_type=social_provider.update&outcome=success', { token: own.apiKey })).body.meta
        .total as number;
    expect(await saves()).toBe(1);
    app.clock.advance(5000);
    for (const same of [
      body,
      { client_id: 'gh-client', enabled: true },
      { ...body, display_name: 'GitHub', scopes: ['read:user', 'user:email'] },
    ]) {
      const res = await call(app, 'PUT', path, { token: own.apiKey, body: same });
      expect(res.status, JSON.stringify(same)).toBe(200);
      expect(res.body.data, JSON.stringify(same)).toEqual(created.body.data);
    }
    expect(await saves()).toBe(1);
    const rotated = await call(app, 'PUT', path, { token: own.apiKey, body: { ...body, client_secret: 'gh-secret-other' } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.client_secret).toBe('••••ther');
    expect(rotated.body.data.updated_at).not.toBe(created.body.data.updated_at);
    expect(await saves()).toBe(2);
  });

  it('redirects with state, nonce and PKCE, creates the user from the verified profile, and swaps the code once', async () => {
    const authorize = await start();
    expect(authorize.origin).toBe(idp.issuer);
    for (const param of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(param)).toBeTruthy();
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');

    const email = uniqueEmail('social');
    const { res, location, callback } = await throughProvider(email, { given_name: 'Ada', family_name: 'Lovelace' });
    expect(res.status).toBe(303);
    expect(`${location.origin}${location.pathname}`).toBe(`${base}/login/callback`);
    const code = location.searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const exchanged = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code } });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.data).toMatchObject({ token_type: 'Bearer', user: { email, name: 'Ada Lovelace', email_verified: true } });
    expect(exchanged.body.data.user.metadata).toMatchObject({ first_name: 'Ada', last_name: 'Lovelace', email });
    const me = await call(app, 'GET', '/api/v1/auth/sessions', { token: exchanged.body.data.access_token });
    expect(me.status).toBe(200);

    const twice = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code } });
    expect([twice.status, twice.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const replayed = await call(app, 'GET', onApp(callback));
    expect([replayed.status, replayed.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('refuses a wrong state and a mismatched nonce', async () => {
    const forged = await call(app, 'GET', '/api/v1/auth/oauth/oidc/callback?code=abc&state=forged');
    expect([forged.status, forged.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    const email = uniqueEmail('nonce');
    const { res, location } = await throughProvider(email, {}, (url) => url.searchParams.set('nonce', 'not-the-nonce-we-sent'));
    expect(res.status).toBe(303);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('code')).toBeNull();
    const users = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token: ws.apiKey });
    expect(users.body.meta.total).toBe(0);
  });

  it('links an existing account only for a verified email, and still asks its second factor', async () => {
    const email = uniqueEmail('existing');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'existing passphrase' } });

    const unverified = await throughProvider(email, { email_verified: false });
    expect(unverified.location.searchParams.get('error')).toBe('access_denied');

    const session = await signIn(app, ws.id, email, 'existing passphrase');
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: codeAt(totp, app.clock) },
    });
    app.clock.advance(60_000);

    const { location } = await throughProvider(email);
    const exchanged = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code: location.searchParams.get('code') } });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.data).toMatchObject({ mfa_required: true, available_factors: ['totp'] });
    expect(exchanged.body.data.access_token).toBeUndefined();
    const verified = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
      body: { mfa_token: exchanged.body.data.mfa_token, code: codeAt(totp, app.clock) },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.data.user.email).toBe(email);
  });

  /** A sign-in as the provider's subject `sub`: where the callback sends the browser. */
  it('revokes a pending invitation of the address when a sign-in creates its user, audited', async () => {
    const email = uniqueEmail('invited-social');
    const invited = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } });
    expect(invited.status).toBe(201);
    const { res } = await throughProvider(email);
    expect(res.status).toBe(303);
    const read = await call(app, 'GET', `/api/v1/invitations/${invited.body.data.id}`, { token: ws.apiKey });
    expect(read.body.data.status).toBe('revoked');
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=invitation.revoke&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.find((e: { target: { id: string } }) => e.target.id === invited.body.data.id)).toMatchObject({
      actor: { type: 'system' },
      details: { reason: 'user_exists' },
    });
  });

  async function asSubject(sub: string, claims: Record<string, unknown>): Promise<URL> {
    const authorize = await start();
    idp.signInAs({ sub, claims });
    const res = await call(app, 'GET', onApp(await idp.authorize(authorize.href)), { headers: { 'x-forwarded-for': someIp() } });
    expect(res.status).toBe(303);
    return new URL(res.headers.get('location') as string);
  }

  async function exchangedUser(location: URL): Promise<{ id: string; email: string }> {
    expect(location.searchParams.get('error'), location.searchParams.get('error_description') ?? '').toBeNull();
    const exchanged = await call(app, 'POST', '/api/v1/auth/oauth/exchange', {
      body: { code: location.searchParams.get('code') },
      headers: { 'x-forwarded-for': someIp() },
    });
    expect(exchanged.status).toBe(200);
    return exchanged.body.data.user;
  }

  it('recognises a returning user by the provider’s subject, verified email or not; another subject still needs a verified one', async () => {
    const email = uniqueEmail('unverified');
    const sub = `returning-${email}`;
    const first = await exchangedUser(await asSubject(sub, { email, email_verified: false }));
    expect(first).toMatchObject({ email, email_verified: false });
    const again = await exchangedUser(await asSubject(sub, { email, email_verified: false }));
    expect(again.id).toBe(first.id);
    // The address changed at the provider: the subject still names the same account, whose email stays.
    const moved = await exchangedUser(await asSubject(sub, { email: uniqueEmail('moved'), email_verified: false }));
    expect(moved).toMatchObject({ id: first.id, email, email_verified: false });

    const stranger = await asSubject(`stranger-${email}`, { email, email_verified: false });
    expect(stranger.searchParams.get('error')).toBe('access_denied');
    expect(stranger.searchParams.get('code')).toBeNull();

    // An account made otherwise is linked by a verified email once; then its subject is enough.
    const existing = uniqueEmail('linked');
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: existing, password: 'existing passphrase' },
    });
    const linkedSub = `linked-${existing}`;
    expect((await asSubject(linkedSub, { email: existing, email_verified: false })).searchParams.get('error')).toBe('access_denied');
    expect((await exchangedUser(await asSubject(linkedSub, { email: existing, email_verified: true }))).id).toBe(created.body.data.id);
    expect((await exchangedUser(await asSubject(linkedSub, { email: existing, email_verified: false }))).id).toBe(created.body.data.id);
  });

  it('hands the app’s state back with the code and with an error; the provider’s access_denied reaches the app as that', async () => {
    const appState = 'app:session 42/?&=x';
    const startWith = async (state: string) => {
      const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&state=${encodeURIComponent(state)}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(302);
      return new URL(res.headers.get('location') as string);
    };
    const authorize = await startWith(appState);
    // The provider gets a state of our own, never the app's.
    expect(authorize.searchParams.get('state')).not.toBe(appState);
    const email = uniqueEmail('state');
    idp.signInAs({ sub: `sub-${email}`, claims: { email, email_verified: true } });
    const back = await call(app, 'GET', onApp(await idp.authorize(authorize.href)), { headers: { 'x-forwarded-for': someIp() } });
    const location = new URL(back.headers.get('location') as string);
    expect([...location.searchParams.keys()]).toEqual(['code', 'state']);
    expect(location.searchParams.get('state')).toBe(appState);
    expect((await exchangedUser(location)).email).toBe(email);

    // The user cancels at the provider: access_denied, with the app's state, audited as the provider's refusal.
    const cancelled = await startWith('cancel-1');
    const res = await call(
      app,
      'GET',
      `/api/v1/auth/oauth/oidc/callback?error=access_denied&state=${cancelled.searchParams.get('state')}`,
      {
        headers: { 'x-forwarded-for': someIp() },
      },
    );
    expect(res.status).toBe(303);
    const refused = new URL(res.headers.get('location') as string);
    expect([...refused.searchParams.keys()]).toEqual(['error', 'error_description', 'state']);
    expect(refused.searchParams.get('error')).toBe('access_denied');
    expect(refused.searchParams.get('state')).toBe('cancel-1');
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason)).toContain('provider_refused');

    // The provider refuses the request this service sent (its client or scopes): not the person's doing.
    for (const providerError of ['unauthorized_client', 'invalid_scope', 'unsupported_response_type']) {
      const started = await startWith(`misconfigured-${providerError}`);
      const back = await call(
        app,
        'GET',
        `/api/v1/auth/oauth/oidc/callback?error=${providerError}&state=${started.searchParams.get('state')}`,
        { headers: { 'x-forwarded-for': someIp() } },
      );
      const result = new URL(back.headers.get('location') as string);
      expect([result.searchParams.get('error'), result.searchParams.get('state')], providerError).toEqual([
        'server_error',
        `misconfigured-${providerError}`,
      ]);
      expect(result.searchParams.get('error_description'), providerError).toContain(
        `refused this service's sign-in request (${providerError})`,
      );
      const [row] = (await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=1', { token: ws.apiKey }))
        .body.data;
      expect([row.details.reason, row.details.provider_error], providerError).toEqual(['provider_misconfigured', providerError]);
    }

    // Without a state from the app, none comes back.
    const plain = await throughProvider(uniqueEmail('stateless'));
    expect(plain.location.searchParams.has('state')).toBe(false);

    for (const bad of [`state=${'x'.repeat(513)}`, 'state=a&state=b', 'state=%01', `state=${encodeURIComponent('é')}`]) {
      const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&${bad}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect([res.status, res.body.error?.code, res.body.error?.details?.[0]?.path], bad.slice(0, 20)).toEqual([
        400,
        'BAD_REQUEST',
        'state',
      ]);
    }
    expect((await startWith('y'.repeat(512))).origin).toBe(idp.issuer);
  });

  it('accepts a redirect_uri of the service or registered on an application, refuses others and unconfigured providers', async () => {
    const evil = await call(
      app,
      'GET',
      `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}`,
    );
    expect(evil.status).toBe(400);
    const app1 = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Web app', type: 'spa', redirect_uris: ['https://app.example.com/auth/done'] },
    });
    expect(app1.status).toBe(201);
    const registered = await call(
      app,
      'GET',
      `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&redirect_uri=${encodeURIComponent('https://app.example.com/auth/done')}`,
    );
    expect(registered.status).toBe(302);
    const near = await call(
      app,
      'GET',
      `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&redirect_uri=${encodeURIComponent('https://app.example.com/auth/done/x')}`,
    );
    expect(near.status).toBe(400);
    const google = await call(app, 'GET', `/api/v1/auth/oauth/google/start?workspace_id=${ws.id}`);
    expect(google.status).toBe(404);
  });

  it('answers an unknown provider 404 whatever the workspace, and takes the workspace from a credential when none is named', async () => {
    for (const path of ['/api/v1/auth/oauth/gitlab/start', `/api/v1/auth/oauth/gitlab/start?workspace_id=${ws.id}`]) {
      const res = await call(app, 'GET', path, { headers: { 'x-forwarded-for': someIp() } });
      expect([res.status, res.body.error.code], path).toEqual([404, 'NOT_FOUND']);
    }
    // A backend asks for the redirect with its API key, as it lists the providers.
    const byKey = await call(app, 'GET', '/api/v1/auth/oauth/oidc/start', { token: ws.apiKey, headers: { 'x-forwarded-for': someIp() } });
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(302);
    expect(new URL(byKey.headers.get('location') as string).origin).toBe(idp.issuer);
    const badKey = await call(app, 'GET', '/api/v1/auth/oauth/oidc/start', {
      token: 'sk_not_a_key',
      headers: { 'x-forwarded-for': someIp() },
    });
    expect([badKey.status, badKey.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const nothing = await call(app, 'GET', '/api/v1/auth/oauth/oidc/start', { headers: { 'x-forwarded-for': someIp() } });
    expect([nothing.status, nothing.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('refuses an expired state and an expired code, refuses a deactivated account at the exchange, and keeps workspaces apart', async () => {
    // The provider took longer than the flow's ten minutes.
    const late = await start();
    const lateEmail = uniqueEmail('late');
    idp.signInAs({ sub: `sub-${lateEmail}`, claims: { email: lateEmail, email_verified: true } });
    const lateCallback = await idp.authorize(late.href);
    app.clock.advance(10 * 60_000 + 1000);
    const expiredState = await call(app, 'GET', onApp(lateCallback), { headers: { 'x-forwarded-for': someIp() } });
    expect([expiredState.status, expiredState.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);

    // The app swapped the code after its 60 seconds.
    const slow = await throughProvider(uniqueEmail('slow'));
    app.clock.advance(61_000);
    const expiredCode = await call(app, 'POST', '/api/v1/auth/oauth/exchange', {
      body: { code: slow.location.searchParams.get('code') },
      headers: { 'x-forwarded-for': someIp() },
    });
    expect([expiredCode.status, expiredCode.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    // The same address in another workspace is another account: the sign-in creates one here.
    const other = await createWorkspace(app, 'Other social');
    const shared = uniqueEmail('shared');
    const elsewhere = await call(app, 'POST', '/api/v1/users', {
      token: other.apiKey,
      body: { email: shared, password: 'other passphrase' },
    });
    expect(elsewhere.status).toBe(201);
    // A code presented with another workspace's X-Tenant-ID names nothing there and stays usable.
    const sharedCode = (await throughProvider(shared)).location;
    const wrongTenant = await call(app, 'POST', '/api/v1/auth/oauth/exchange', {
      body: { code: sharedCode.searchParams.get('code') },
      headers: { 'x-tenant-id': other.id, 'x-forwarded-for': someIp() },
    });
    expect([wrongTenant.status, wrongTenant.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
    const ownTenant = await call(app, 'POST', '/api/v1/auth/oauth/exchange', {
      body: { code: sharedCode.searchParams.get('code') },
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
    });
    expect(ownTenant.status).toBe(200);
    const here = ownTenant.body.data.user;
    expect(here.id).not.toBe(elsewhere.body.data.id);
    expect((await call(app, 'GET', `/api/v1/users/${here.id}`, { token: other.apiKey })).status).toBe(404);
    // Workspace B has no provider configured: its start is 404, its list empty.
    const startB = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${other.id}`, {
      headers: { 'x-forwarded-for': someIp() },
    });
    expect([startB.status, startB.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const listB = await call(app, 'GET', '/api/v1/auth/oauth/providers', {
      headers: { 'x-tenant-id': other.id, 'x-forwarded-for': someIp() },
    });
    expect(listB.body.data).toEqual([]);

    // Deactivated between the callback and the exchange.
    const gone = await throughProvider(shared);
    await call(app, 'PATCH', `/api/v1/users/${here.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    const refused = await call(app, 'POST', '/api/v1/auth/oauth/exchange', {
      body: { code: gone.location.searchParams.get('code') },
      headers: { 'x-forwarded-for': someIp() },
    });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ACCOUNT_DEACTIVATED']);
  });

  it('answers a method the start and callback do not take 405 with Allow, in the envelope', async () => {
    for (const [method, path] of [
      ['POST', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`],
      ['DELETE', '/api/v1/auth/oauth/oidc/callback?state=x'],
      ['PUT', '/api/v1/auth/sso/start'],
    ] as const) {
      const res = await call(app, method, path, { headers: { 'x-forwarded-for': someIp() } });
      expect([res.status, res.body.error?.code, res.headers.get('allow')], `${method} ${path}`).toEqual([
        405,
        'BAD_REQUEST',
        'GET, HEAD, OPTIONS',
      ]);
      expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
    }
    // OPTIONS is answered as the REST door answers it on its paths: 204 with Allow.
    for (const path of ['/api/v1/auth/oauth/oidc/start', '/api/v1/auth/sso/saml/org_00000000000000000000000000/acs']) {
      const res = await call(app, 'OPTIONS', path, { headers: { 'x-forwarded-for': someIp() } });
      expect([res.status, res.headers.get('allow')], path).toEqual([204, path.endsWith('/acs') ? 'POST, OPTIONS' : 'GET, HEAD, OPTIONS']);
    }
  });

  it('keeps the scope a sign-in needs when a workspace names its own: openid, and user:email for GitHub', async () => {
    const own = await createWorkspace(app, 'Scopes');
    const cases = [
      ['google', [], ['openid']],
      ['oidc', ['email', 'profile'], ['openid', 'email', 'profile']],
      ['github', ['read:org'], ['user:email', 'read:org']],
      ['microsoft', ['openid', 'offline_access'], ['openid', 'offline_access']],
    ] as const;
    for (const [provider, scopes, stored] of cases) {
      const put = await call(app, 'PUT', `/api/v1/auth/oauth/providers/${provider}`, {
        token: own.apiKey,
        body: { client_id: 'c', client_secret: 's', scopes, ...(provider === 'oidc' ? { issuer: idp.issuer } : {}) },
      });
      expect([put.status, put.body.data?.scopes], provider).toEqual([201, stored]);
    }
    const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}`, {
      headers: { 'x-forwarded-for': someIp() },
    });
    expect(new URL(res.headers.get('location') as string).searchParams.get('scope')).toBe('openid email profile');
  });

  it('binds the code to the app’s PKCE code_challenge: the exchange needs the matching code_verifier', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const startedWith = async (query: string) => {
      const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}${query}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(302);
      const email = uniqueEmail('pkce');
      idp.signInAs({ sub: `sub-${email}`, claims: { email, email_verified: true } });
      const back = await call(app, 'GET', onApp(await idp.authorize(res.headers.get('location') as string)), {
        headers: { 'x-forwarded-for': someIp() },
      });
      return { email, code: new URL(back.headers.get('location') as string).searchParams.get('code') as string };
    };
    const withChallenge = () => startedWith(`&code_challenge=${challenge}&code_challenge_method=S256`);
    const exchange = (body: Record<string, unknown>) =>
      call(app, 'POST', '/api/v1/auth/oauth/exchange', { body, headers: { 'x-forwarded-for': someIp() } });

    // Without the verifier, or with another one, the code is refused and spent.
    const stolen = await withChallenge();
    const bare = await exchange({ code: stolen.code });
    expect([bare.status, bare.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await exchange({ code: stolen.code, code_verifier: verifier })).status).toBe(401);
    const wrong = await withChallenge();
    const other = await exchange({ code: wrong.code, code_verifier: randomBytes(32).toString('base64url') });
    expect([other.status, other.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    // A verifier for a code started without a challenge is refused and spends it (RFC 9700 §2.1.1): the
    // one who started that sign-in bound nothing, so a verifier cannot be theirs (a downgrade).
    const unbound = await startedWith('');
    const downgraded = await exchange({ code: unbound.code, code_verifier: verifier });
    expect([downgraded.status, downgraded.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await exchange({ code: unbound.code })).status).toBe(401);

    const good = await withChallenge();
    const signedIn = await exchange({ code: good.code, code_verifier: verifier });
    expect([signedIn.status, signedIn.body.data?.user?.email]).toEqual([200, good.email]);

    for (const [query, path] of [
      [`code_challenge=${challenge}&code_challenge_method=plain`, 'code_challenge_method'],
      ['code_challenge=short', 'code_challenge'],
      ['code_challenge_method=S256', 'code_challenge'],
    ]) {
      const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}&${query}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect([res.status, res.body.error?.details?.[0]?.path], query).toEqual([400, path]);
    }
    const badVerifier = await exchange({ code: 'x', code_verifier: 'too short' });
    expect([badVerifier.status, badVerifier.body.error.details[0].path]).toEqual([400, 'code_verifier']);
  });

  it('does not let a provider the workspace chose the issuer of claim an account with more rights than a member by its email', async () => {
    // The generic OIDC provider is whatever server an admin named: its "verified" email proves nothing about the owner.
    const owner = await asSubject(`forged-${ws.owner.email}`, { email: ws.owner.email, email_verified: true });
    expect(owner.searchParams.get('error')).toBe('access_denied');
    expect(owner.searchParams.get('error_description')).toContain('sign in with its password');
    expect(owner.searchParams.get('code')).toBeNull();

    const adminEmail = uniqueEmail('admin');
    const admin = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: adminEmail, password: 'admin passphrase' } });
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const adminRole = roles.body.data.find((r: { key: string }) => r.key === 'admin');
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: admin.body.data.id, role_id: adminRole.id } }))
        .status,
    ).toBe(201);
    const forged = await asSubject(`forged-${adminEmail}`, { email: adminEmail, email_verified: true });
    expect(forged.searchParams.get('error')).toBe('access_denied');

    // A member's account still links by its verified email (the test above), and a new address still makes one.
    const fresh = uniqueEmail('fresh');
    expect((await exchangedUser(await asSubject(`fresh-${fresh}`, { email: fresh, email_verified: true }))).email).toBe(fresh);
  });

  it('starts Google and Microsoft sign-ins from their published endpoints, without fetching discovery', async () => {
    const own = await createWorkspace(app, 'Presets');
    const cases = [
      ['google', 'https://accounts.google.com/o/oauth2/v2/auth'],
      ['microsoft', 'https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize'],
    ] as const;
    for (const [provider, authorize] of cases) {
      const put = await call(app, 'PUT', `/api/v1/auth/oauth/providers/${provider}`, {
        token: own.apiKey,
        body: { client_id: `${provider}-client`, client_secret: 'provider secret' },
      });
      expect(put.status).toBe(201);
      const res = await call(app, 'GET', `/api/v1/auth/oauth/${provider}/start?workspace_id=${own.id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(302);
      const location = new URL(res.headers.get('location') as string);
      expect(`${location.origin}${location.pathname}`).toBe(authorize);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({
        client_id: `${provider}-client`,
        redirect_uri: `${base}/api/v1/auth/oauth/${provider}/callback`,
        response_type: 'code',
        scope: 'openid email profile',
        code_challenge_method: 'S256',
      });
      expect(location.searchParams.get('state')).toBeTruthy();
      expect(location.searchParams.get('nonce')).toBeTruthy();
    }
  });

  it('answers 503 UNAVAILABLE, not 500, when a provider cannot be reached', async () => {
    const own = await createWorkspace(app, 'Unreachable');
    await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: own.apiKey,
      body: { client_id: 'c', client_secret: 's', issuer: 'http://127.0.0.1:9/nowhere' },
    });
    const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}`);
    expect([res.status, res.body.error.code]).toEqual([503, 'UNAVAILABLE']);
    expect(res.headers.get('retry-after')).toBe('30');
  });

  it('tells the app temporarily_unavailable, not access_denied, when the provider’s token endpoint is down; a refusal stays access_denied', async () => {
    // A provider whose discovery works and whose token endpoint answers as `token` says.
    let token: 'down' | 'refuses' | 'unreachable' = 'down';
    const server = createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.url === '/.well-known/openid-configuration') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: token === 'unreachable' ? 'http://127.0.0.1:9/token' : `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ['code'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
          }),
        );
        return;
      }
      if (req.url === '/token' && token === 'refuses') {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
        return;
      }
      res.writeHead(503, { 'content-type': 'text/html' }).end('<h1>Service Unavailable</h1>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const own = await createWorkspace(app, 'Provider down');
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const callback = async (clientId: string) => {
        const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
          token: own.apiKey,
          body: { client_id: clientId, client_secret: 's', issuer },
        });
        expect(put.status).toBeLessThan(300);
        const started = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}&state=app-1`);
        expect(started.status, JSON.stringify(started.body)).toBe(302);
        const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
        const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/callback?code=provider-code&state=${encodeURIComponent(state)}`);
        expect(res.status).toBe(303);
        return new URL(res.headers.get('location') as string).searchParams;
      };
      const reasons = async () => {
        const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', {
          token: own.apiKey,
        });
        return audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason);
      };

      // Each case its own client id: discovery is kept per issuer and client.
      const down = await callback('client-down');
      expect(down.get('error')).toBe('temporarily_unavailable');
      expect(down.get('error_description')).toMatch(/try again later/);
      expect(down.get('state')).toBe('app-1');
      expect(await reasons()).toEqual(['provider_unavailable']);

      token = 'unreachable';
      expect((await callback('client-unreachable')).get('error')).toBe('temporarily_unavailable');
      expect(await reasons()).toEqual(['provider_unavailable', 'provider_unavailable']);

      token = 'refuses';
      const refused = await callback('client-refuses');
      expect(refused.get('error')).toBe('access_denied');
      expect((await reasons())[0]).not.toBe('provider_unavailable');
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('answers a provider whose discovery document is wrong as misconfigured (500 naming it, no Retry-After; server_error to the app and the dashboard); an outage stays 503', async () => {
    const fake = await startFakeDiscovery();
    try {
      const own = await createWorkspace(app, 'Misconfigured provider');
      let clients = 0;
      // Each time another client id: discovery is kept per issuer and client once it has worked.
      const configure = async () => {
        clients += 1;
        const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
          token: own.apiKey,
          body: { client_id: `misconfigured-${clients}`, client_secret: 's', issuer: fake.issuer },
        });
        expect(put.status).toBeLessThan(300);
      };
      const start = () => call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}&state=app-3`);
      const wrong: [DiscoveryFault, RegExp][] = [
        ['not_found', /HTTP 404/],
        ['not_json', /not a JSON object/],
        ['no_authorization_endpoint', /authorization_endpoint/],
        ['no_token_endpoint', /token_endpoint/],
        ['other_issuer', /another issuer/],
      ];
      // The operator hears of each in the log, as of a misconfiguration found at a callback.
      const warned = vi.spyOn(app.deps.log, 'warn');
      for (const [fault, problem] of wrong) {
        fake.fault = fault;
        await configure();
        warned.mockClear();
        const res = await start();
        expect([res.status, res.body.error?.code, res.headers.get('retry-after')], fault).toEqual([500, 'INTERNAL', null]);
        expect(res.body.error.message, fault).toContain(fake.issuer);
        expect(res.body.error.message, fault).toMatch(problem);
        expect(warned, fault).toHaveBeenCalledWith('external sign-in: the identity provider is misconfigured', {
          error: res.body.error.message,
        });
      }
      warned.mockRestore();
      for (const fault of ['down', 'rate_limited'] as const) {
        fake.fault = fault;
        await configure();
        const res = await start();
        expect([res.status, res.body.error?.code, res.headers.get('retry-after')], fault).toEqual([503, 'UNAVAILABLE', '30']);
      }
      // A start the dashboard navigated to: its /login/callback hears server_error and the problem.
      fake.fault = 'not_found';
      // node:http, not fetch: fetch sends Sec-Fetch-Mode: cors whatever it is given.
      const navigated = await new Promise<{ status: number; location: string }>((resolve, reject) => {
        const path = `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}`;
        const headers = { 'x-forwarded-for': someIp(), 'sec-fetch-mode': 'navigate', accept: 'text/html' };
        request(`${app.url}${path}`, { headers }, (res) => {
          res.resume().on('end', () => resolve({ status: res.statusCode as number, location: res.headers.location ?? '' }));
        })
          .on('error', reject)
          .end();
      });
      expect(navigated.status).toBe(303);
      const shown = new URL(navigated.location).searchParams;
      expect(shown.get('error')).toBe('server_error');
      expect(shown.get('error_description')).toMatch(/HTTP 404/);

      // Discovery that goes wrong between the start and the callback: the app hears server_error.
      fake.fault = 'none';
      await configure();
      const started = await start();
      expect(started.status, JSON.stringify(started.body)).toBe(302);
      const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
      fake.fault = 'other_issuer';
      await configure();
      const back = await call(app, 'GET', `/api/v1/auth/oauth/oidc/callback?code=provider-code&state=${encodeURIComponent(state)}`);
      expect(back.status).toBe(303);
      const result = new URL(back.headers.get('location') as string).searchParams;
      expect([result.get('error'), result.get('state')]).toEqual(['server_error', 'app-3']);
      expect(result.get('error_description')).toContain(fake.issuer);
      expect(result.get('error_description')).toMatch(/another issuer/);
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', {
        token: own.apiKey,
      });
      expect(audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason)).toEqual(['provider_misconfigured']);
    } finally {
      await fake.close();
    }
  });

  /**
   * A sign-in through the fake provider as `set` leaves it (its faults reset first), each with a client id
   * of its own (the configuration is kept per issuer and client): the app's redirect, and the audit
   * reason of the failure it was (if it was one).
   */
  async function throughFake(
    fake: FakeDiscovery,
    own: TestWorkspace,
    set: (fake: FakeDiscovery) => void,
    clientId = `fake-client-${randomBytes(6).toString('hex')}`,
  ) {
    fake.behaveWell();
    set(fake);
    const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: own.apiKey,
      body: { client_id: clientId, client_secret: 'fake-client-secret-of-thirty-two-bytes', issuer: fake.issuer },
    });
    expect(put.status).toBeLessThan(300);
    const started = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}&state=app-5`);
    if (started.status !== 302) return { started, result: null, reason: null };
    const back = await fake.authorize(started.headers.get('location') as string);
    const res = await call(app, 'GET', onApp(back));
    expect(res.status).toBe(303);
    const result = new URL(res.headers.get('location') as string).searchParams;
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=1', { token: own.apiKey });
    const reason = result.has('error') ? (audit.body.data[0]?.details.reason as string) : null;
    return { started, result, reason };
  }

  it('tells the app what went wrong at the provider’s token and userinfo endpoints: another server’s page or a refused client is server_error naming it, an outage temporarily_unavailable, invalid_grant access_denied', async () => {
    const fake = await startFakeDiscovery();
    try {
      const own = await createWorkspace(app, 'Endpoints');
      // A provider that answers rightly: the sign-in goes through.
      const fine = await throughFake(fake, own, () => undefined);
      expect(fine.result?.get('code'), JSON.stringify(fine.started.body)).toBeTruthy();

      const misconfigured: ['token' | 'userinfo', EndpointFault, RegExp][] = [
        ['token', 'not_found', /its token endpoint \(http:\/\/127\.0\.0\.1:\d+\/token\) answered HTTP 404/],
        ['token', 'method_not_allowed', /token endpoint .* answered HTTP 405/],
        ['token', 'redirect', /token endpoint .* answered HTTP 302/],
        ['token', 'html', /token endpoint .* answered something that is not JSON/],
        ['token', 'not_json', /token endpoint .* answered something that is not JSON/],
        ['token', 'no_access_token', /token endpoint .* answered without a usable access_token/],
        ['token', 'no_id_token', /token endpoint .* answered without a usable id_token/],
        [
          'token',
          'invalid_client',
          /token endpoint .* refused this service's client \(invalid_client\)\. Correct the client ID and secret/,
        ],
        ['userinfo', 'not_found', /its userinfo endpoint \(.*\/userinfo\) answered HTTP 404/],
        ['userinfo', 'html', /userinfo endpoint .* answered something that is not JSON/],
      ];
      // The operator hears of each in the log, as of a wrong discovery document.
      const warned = vi.spyOn(app.deps.log, 'warn');
      for (const [endpoint, fault, problem] of misconfigured) {
        warned.mockClear();
        const { result, reason } = await throughFake(fake, own, (f) => (f[endpoint] = fault));
        const label = `${endpoint} ${fault}`;
        expect([result?.get('error'), result?.get('state'), reason], label).toEqual(['server_error', 'app-5', 'provider_misconfigured']);
        expect(result?.get('error_description'), label).toContain(`issuer ${fake.issuer} is misconfigured`);
        expect(result?.get('error_description'), label).toMatch(problem);
        expect(warned, label).toHaveBeenCalledWith('external sign-in: the identity provider is misconfigured', {
          error: result?.get('error_description'),
        });
      }
      warned.mockRestore();

      const down: ['token' | 'userinfo', EndpointFault][] = [
        ['token', 'down'],
        ['token', 'rate_limited'],
        ['token', 'unreachable'],
        ['userinfo', 'down'],
        ['userinfo', 'rate_limited'],
      ];
      for (const [endpoint, fault] of down) {
        const { result, reason } = await throughFake(fake, own, (f) => (f[endpoint] = fault));
        expect([result?.get('error'), result?.get('state'), reason], `${endpoint} ${fault}`).toEqual([
          'temporarily_unavailable',
          'app-5',
          'provider_unavailable',
        ]);
      }

      // A token endpoint the provider's document names wrongly, then mends: the next sign-in reads the mended document.
      const mended = `mended-${randomBytes(6).toString('hex')}`;
      const wrongPath = await throughFake(fake, own, (f) => (f.tokenEndpoint = `${f.issuer}/oauth2/grant`), mended);
      expect(wrongPath.result?.get('error_description')).toMatch(/its token endpoint \(.*\/oauth2\/grant\) answered HTTP 404/);
      expect((await throughFake(fake, own, () => undefined, mended)).result?.get('code')).toBeTruthy();

      // The person's code refused (expired, used): a refusal of this sign-in, as before.
      const refused = await throughFake(fake, own, (f) => (f.token = 'invalid_grant'));
      expect([refused.result?.get('error'), refused.result?.get('state')]).toEqual(['access_denied', 'app-5']);
      expect(refused.result?.get('error_description')).toBe(
        'The identity provider refused the sign-in’s code (invalid_grant); start the sign-in again',
      );
      expect(refused.reason).toBe('provider_refused');
    } finally {
      await fake.close();
    }
  });

  it('checks the id_token’s signature with the keys of the provider’s jwks_uri: a forged one is refused; no jwks_uri, a JWKS that is no JSON or a secret-signed id_token is misconfigured, a JWKS down an outage', async () => {
    const fake = await startFakeDiscovery();
    try {
      const own = await createWorkspace(app, 'Signatures');
      // Signed with a key the provider does not publish, under its key's kid: the answer does not verify.
      const forged = await throughFake(fake, own, (f) => (f.idTokenKey = 'unpublished'));
      expect([forged.result?.get('error'), forged.result?.get('code'), forged.result?.get('state')]).toEqual([
        'access_denied',
        null,
        'app-5',
      ]);
      expect(forged.reason).toBe('provider_error');

      // A discovery document without jwks_uri is refused at the start, like one without token_endpoint.
      const noKeys = await throughFake(fake, own, (f) => (f.fault = 'no_jwks_uri'));
      const { started } = noKeys;
      expect([started.status, started.body.error?.code, started.headers.get('retry-after')]).toEqual([500, 'INTERNAL', null]);
      expect(started.body.error.message).toContain(fake.issuer);
      expect(started.body.error.message).toMatch(/its discovery document has no jwks_uri/);

      const misconfigured: [(f: FakeDiscovery) => void, RegExp][] = [
        [(f) => (f.jwks = 'not_found'), /its JWKS \(jwks_uri http:\/\/127\.0\.0\.1:\d+\/jwks\) answered HTTP 404/],
        [(f) => (f.jwks = 'html'), /its JWKS .* answered something that is not JSON/],
        [(f) => (f.idTokenKey = 'client_secret'), /id_token signed with HS256.*Set the client's id_token signing algorithm/],
      ];
      for (const [set, problem] of misconfigured) {
        const { result, reason } = await throughFake(fake, own, set);
        expect([result?.get('error'), result?.get('state'), reason], String(problem)).toEqual([
          'server_error',
          'app-5',
          'provider_misconfigured',
        ]);
        expect(result?.get('error_description'), String(problem)).toMatch(problem);
      }
      for (const fault of ['down', 'rate_limited', 'unreachable'] as const) {
        const { result, reason } = await throughFake(fake, own, (f) => (f.jwks = fault));
        expect([result?.get('error'), reason], fault).toEqual(['temporarily_unavailable', 'provider_unavailable']);
      }
    } finally {
      await fake.close();
    }
  });

  it('never repeats credentials written into an issuer URL in a misconfiguration message, which any caller of the start reads', async () => {
    const fake = await startFakeDiscovery();
    try {
      const own = await createWorkspace(app, 'Issuer with credentials');
      fake.fault = 'not_found';
      const withCredentials = `${fake.issuer.replace('http://', 'http://discovery-user:issuer-password@')}/realms/acme`;
      const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
        token: own.apiKey,
        body: { client_id: 'credentials-1', client_secret: 's', issuer: withCredentials },
      });
      expect(put.status).toBeLessThan(300);
      const res = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${own.id}`);
      expect([res.status, res.body.error?.code]).toEqual([500, 'INTERNAL']);
      expect(res.body.error.message).toContain(`${fake.issuer}/realms/acme`);
      expect(res.body.error.message).not.toMatch(/issuer-password|discovery-user/);
    } finally {
      await fake.close();
    }
  });

  it('limits social sign-in calls to 30 per minute per IP', async () => {
    const ip = someIp();
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) {
      statuses.push(
        (await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`, { headers: { 'x-forwarded-for': ip } })).status,
      );
    }
    expect(statuses.slice(0, 30).every((s) => s === 302)).toBe(true);
    const limited = await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`, { headers: { 'x-forwarded-for': ip } });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();
  });

  it('counts the providers’ configuration toward /api/v1/auth/oauth/*: the 31st call in a minute is 429 RATE_LIMITED', async () => {
    const ip = someIp();
    const from = { 'x-forwarded-for': ip };
    const path = '/api/v1/auth/oauth/providers/oidc';
    const body = { client_id: 'identity-service', issuer: idp.issuer, display_name: 'Acme ID' };
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push((await call(app, 'PUT', path, { token: ws.apiKey, body, headers: from })).status);
      statuses.push((await call(app, 'GET', path, { token: ws.apiKey, headers: from })).status);
      statuses.push((await call(app, 'GET', '/api/v1/auth/oauth/providers', { headers: { ...from, 'x-tenant-id': ws.id } })).status);
    }
    expect(new Set(statuses)).toEqual(new Set([200]));
    const limited = await call(app, 'PUT', path, { token: ws.apiKey, body, headers: from });
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('30');
    // Counted per address before the credential is read: without one it is still 429, and so is the exchange.
    expect((await call(app, 'GET', path, { headers: from })).status).toBe(429);
    expect((await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code: 'x' }, headers: from })).status).toBe(429);
    // Another address has its own count.
    expect((await call(app, 'GET', path, { token: ws.apiKey, headers: { 'x-forwarded-for': someIp() } })).status).toBe(200);
  });

  it('keeps SSO on a count of its own: SSO calls do not spend the social budget, nor the other way round', async () => {
    const ip = someIp();
    const from = { 'x-forwarded-for': ip };
    const sso: number[] = [];
    for (let i = 0; i < 30; i++) {
      sso.push(
        (await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=someone@nosso.example`, { headers: from })).status,
      );
    }
    expect(new Set(sso)).toEqual(new Set([404]));
    const ssoLimited = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=someone@nosso.example`, {
      headers: from,
    });
    expect([ssoLimited.status, ssoLimited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(ssoLimited.headers.get('retry-after')).toBeTruthy();
    // The same address still has all 30 social calls.
    const social: number[] = [];
    for (let i = 0; i < 30; i++) {
      social.push((await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`, { headers: from })).status);
    }
    expect(new Set(social)).toEqual(new Set([302]));
    expect((await call(app, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`, { headers: from })).status).toBe(429);
  });
});

describe('identity providers at loopback and private addresses, ALLOW_PRIVATE_IDP_TARGETS off', () => {
  let strict: TestApp;
  let lenient: TestApp;
  let provider: Server;
  let requests = 0;
  let port = 0;

  beforeAll(async () => {
    strict = await startTestApp();
    lenient = await startTestApp({ ALLOW_PRIVATE_IDP_TARGETS: 'true' });
    provider = createServer((_req, res) => {
      requests += 1;
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    port = (provider.address() as AddressInfo).port;
  });
  afterAll(async () => {
    provider.closeAllConnections();
    await new Promise<void>((resolve) => provider.close(() => resolve()));
    await strict.close();
    await lenient.close();
  });

  it('refuses them when saved: 400 naming the field', async () => {
    const ws = await createWorkspace(strict, 'Private IdP');
    const local = hostname();
    // This machine's own name resolves to a loopback address (/etc/hosts): a name that is not an IP.
    expect((await lookup(local, { all: true })).every((a) => a.address.startsWith('127.') || a.address === '::1')).toBe(true);
    for (const [name, body, path] of [
      ['oidc', { issuer: `http://127.0.0.1:${port}` }, 'issuer'],
      ['oidc', { issuer: `http://${local}:${port}` }, 'issuer'],
      ['oidc', { issuer: 'http://localhost:8080/realms/x' }, 'issuer'],
      ['oidc', { issuer: 'http://[::1]/x' }, 'issuer'],
      ['microsoft', { issuer: 'http://169.254.169.254/latest' }, 'issuer'],
      ['github', { github_base_url: 'http://10.0.0.1' }, 'github_base_url'],
    ] as const) {
      const res = await call(strict, 'PUT', `/api/v1/auth/oauth/providers/${name}`, {
        token: ws.apiKey,
        body: { client_id: 'c', client_secret: 's', ...body },
      });
      expect([res.status, res.body.error?.code, res.body.error?.details?.[0]?.path], JSON.stringify(body)).toEqual([
        400,
        'BAD_REQUEST',
        path,
      ]);
      expect(res.body.error.message).toMatch(/loopback, private/);
    }
    expect((await call(strict, 'GET', '/api/v1/auth/oauth/providers/oidc', { token: ws.apiKey })).status).toBe(404);
    expect(requests).toBe(0);
  });

  it('refuses them again at use time, after DNS: a provider saved where they were allowed is never called', async () => {
    const ws = await createWorkspace(lenient, 'Saved while allowed');
    // A name, not an IP: only the lookup at connection time can tell it is loopback.
    const saved = await call(lenient, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'c', client_secret: 's', issuer: `http://${hostname()}:${port}` },
    });
    expect(saved.status).toBe(201);
    const start = await call(strict, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`);
    expect([start.status, start.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(start.body.error.message).toMatch(/loopback, private/);
    expect(requests).toBe(0);
    // The deployment that allows them does call it (and finds no OpenID configuration there: a 404,
    // which is the configuration's fault, not an outage).
    const allowed = await call(lenient, 'GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`);
    expect([allowed.status, allowed.body.error.code]).toEqual([500, 'INTERNAL']);
    expect(requests).toBeGreaterThan(0);
  });
});
