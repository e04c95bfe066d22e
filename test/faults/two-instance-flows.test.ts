import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureKey, idpMetadataXml, samlResponseXml, signSamlXml, toBase64 } from '../helpers/saml.ts';
import { linkTokenIn, MailSink, resetTokenIn } from '../helpers/mail-sink.ts';
import { startTestIdp, type TestIdp } from '../helpers/test-idp.ts';
import { createUser, sessionsCall, signIn, signedIn, tokensOf, USER_PASSWORD, userWithTotp } from './flows.ts';
import {
  API_KEY,
  AppProcess,
  MASTER_KEY,
  PgCluster,
  REPO_ROOT,
  RedisServer,
  SHARED_BASE_URL,
  errorCode,
  freshIp,
  request,
  text,
} from './harness.ts';

const CALLBACK = 'https://rp.example.com/auth/callback';
const run = promisify(execFile);

interface Page {
  status: number;
  headers: Headers;
  body: string;
  /** Where a redirect off the service sent the browser (the application's callback). */
  location?: string;
}

/**
 * Journeys whose steps are separate requests, each step sent to the other instance than the step
 * before (a load balancer owes no affinity): whatever one instance keeps for the next step must be
 * where the other finds it.
 */
describe('multi-step flows alternating between two instances', () => {
  let pg: PgCluster;
  let redis: RedisServer;
  let a: AppProcess;
  let b: AppProcess;
  let idp: TestIdp;
  let tenant: string;
  const mail = new MailSink();
  /** Which instance served each request of a journey, for the assertions' messages. */
  let trail: string[] = [];
  let turn = 0;

  /** The instance the next request goes to: never the one the last went to. */
  function next(): AppProcess {
    turn += 1;
    return turn % 2 === 1 ? a : b;
  }

  const nameOf = (app: AppProcess) => (app === a ? 'A' : 'B');

  /** A URL on the shared public origin (or a path), on one instance. */
  function onInstance(app: AppProcess, url: string): string {
    const u = new URL(url, SHARED_BASE_URL);
    return `${app.url}${u.pathname}${u.search}`;
  }

  /** What the load balancer tells each instance: the public host and scheme it was reached at. */
  const BALANCER_HEADERS = { 'x-forwarded-host': new URL(SHARED_BASE_URL).host, 'x-forwarded-proto': 'http' };

  /** A request on the next instance, through the balancer; a redirect is answered, not followed. */
  async function alternate(
    method: string,
    path: string,
    opts: { ip: string; body?: unknown; form?: Record<string, string>; token?: string; cookie?: string },
  ): Promise<Page> {
    const app = next();
    trail.push(`${nameOf(app)} ${method} ${new URL(path, SHARED_BASE_URL).pathname}`);
    const headers: Record<string, string> = { ...BALANCER_HEADERS, 'x-forwarded-for': opts.ip };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.cookie) headers.cookie = opts.cookie;
    let body: string | undefined;
    if (opts.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(opts.form).toString();
    } else if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.body);
    }
    const res = await fetch(onInstance(app, path), { method, headers, body, redirect: 'manual' });
    return { status: res.status, headers: res.headers, body: await res.text() };
  }

  /** openid-client's requests, each to the next instance (the discovery document names the shared origin). */
  const alternatingFetch = (ip: string) => (url: string, options: oidc.CustomFetchOptions) => {
    const app = next();
    trail.push(`${nameOf(app)} ${options.method} ${new URL(url).pathname}`);
    return fetch(onInstance(app, url), {
      ...options,
      body: options.body as RequestInit['body'],
      headers: { ...options.headers, ...BALANCER_HEADERS, 'x-forwarded-for': ip },
    });
  };

  /** A browser behind the load balancer: keeps cookies, follows redirects on the service, each hop on the next instance. */
  class Browser {
    private readonly cookies = new Map<string, string>();
    readonly ip = freshIp();

    private async request(url: string, form?: Record<string, string>): Promise<Page> {
      const app = next();
      const headers: Record<string, string> = { ...BALANCER_HEADERS, accept: 'text/html', 'x-forwarded-for': this.ip };
      if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
      trail.push(`${nameOf(app)} ${form ? 'POST' : 'GET'} ${new URL(url, SHARED_BASE_URL).pathname}`);
      const res = await fetch(onInstance(app, url), {
        method: form ? 'POST' : 'GET',
        headers,
        body: form ? new URLSearchParams(form).toString() : undefined,
        redirect: 'manual',
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
        const eq = pair.indexOf('=');
        const expired = attributes.some((attr) => /^max-age=0$/i.test(attr) || /^expires=Thu, 01 Jan 1970/i.test(attr));
        if (expired || eq === pair.length - 1) this.cookies.delete(pair.slice(0, eq));
        else this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
      }
      return { status: res.status, headers: res.headers, body: await res.text() };
    }

    async go(url: string, form?: Record<string, string>): Promise<Page> {
      let page = await this.request(url, form);
      for (let hops = 0; hops < 10; hops += 1) {
        const location = page.headers.get('location');
        if (!location || page.status < 300 || page.status >= 400) return page;
        const target = new URL(location, SHARED_BASE_URL);
        if (target.origin !== SHARED_BASE_URL) return { ...page, location: target.href };
        page = await this.request(target.href);
      }
      throw new Error('too many redirects');
    }
  }

  /** The action of the page's form whose button says `label`. */
  function formAction(html: string, label: string): string {
    const form = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)].find((f) =>
      (f[2] ?? '').includes(`>${label}</button>`),
    );
    if (!form?.[1]) throw new Error(`no form with "${label}" in:\n${html}`);
    return form[1].replace(/&#38;/g, '&');
  }

  const hiddenInputs = (html: string) =>
    Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));

  /** A code of the authenticator's next 30-second step: the enrolment spent the current one. */
  const nextStepCode = (totp: { generate(options?: { timestamp?: number }): string }) => totp.generate({ timestamp: Date.now() + 30_000 });

  beforeAll(async () => {
    pg = await PgCluster.create();
    redis = await RedisServer.start();
    const env = { BASE_URL: SHARED_BASE_URL, SMTP_URL: await mail.start(), ALLOW_PRIVATE_IDP_TARGETS: 'true' };
    const options = { databaseUrl: pg.url, redisUrl: redis.url, env };
    a = await AppProcess.start(options);
    b = await AppProcess.start(options);
    tenant = pg.query<{ id: string }>('select id from workspaces')[0]?.id as string;
    idp = await startTestIdp([
      {
        client_id: 'identity-service',
        client_secret: 'idp-client-secret',
        redirect_uris: [`${SHARED_BASE_URL}/api/v1/auth/oauth/oidc/callback`],
      },
    ]);
  });

  afterAll(async () => {
    await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    await idp?.close();
    await mail.stop();
    await redis?.kill();
    pg?.destroy();
  });

  it('runs an OAuth authorization with a second factor, then refresh, userinfo, introspection, revocation, a silent second authorization and RP-initiated logout, hopping at every request', async () => {
    trail = [];
    const ip = freshIp();
    const created = await request(a.url, 'POST', '/api/v1/applications', {
      token: API_KEY,
      ip,
      body: { name: 'Twin Portal', type: 'web', redirect_uris: [CALLBACK] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const clientId = text(created, 'data.id');
    const config = await oidc.discovery(
      new URL(SHARED_BASE_URL),
      clientId,
      undefined,
      oidc.ClientSecretBasic(text(created, 'data.client_secret')),
      { execute: [oidc.allowInsecureRequests], [oidc.customFetch]: alternatingFetch(ip) },
    );
    const user = await userWithTotp(a.url, tenant);
    const userId = pg.query<{ id: string }>(`select id from users where email = '${user.email}'`)[0]?.id;

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email offline_access',
      prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const browser = new Browser();
    const login = await browser.go(url.href);
    expect(login.status, `${trail.join('\n')}\n${login.body}`).toBe(200);
    const step = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: USER_PASSWORD });
    expect([step.status, step.location], trail.join('\n')).toEqual([200, undefined]);
    expect(step.body).toContain('autocomplete="one-time-code"');
    const done = await browser.go(formAction(step.body, 'Verify'), { ...hiddenInputs(step.body), code: nextStepCode(user.totp) });
    expect(done.location, `${trail.join('\n')}\n${done.body}`).toBeDefined();
    const callback = new URL(done.location as string);
    expect(callback.origin + callback.pathname).toBe(CALLBACK);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    expect(tokens.claims()).toMatchObject({ amr: ['pwd', 'otp', 'mfa'], nonce });
    const sub = tokens.claims()?.sub as string;
    expect(sub).toBe(userId);
    expect(tokens.refresh_token).toBeTruthy();
    // Twice in a row: once on each instance.
    for (let i = 0; i < 2; i += 1)
      expect(await oidc.fetchUserInfo(config, tokens.access_token, sub)).toMatchObject({ sub, email: user.email });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await oidc.fetchUserInfo(config, refreshed.access_token, sub)).toMatchObject({ sub });
    for (let i = 0; i < 2; i += 1)
      expect(await oidc.tokenIntrospection(config, refreshed.access_token)).toMatchObject({ active: true, sub, client_id: clientId });
    await oidc.tokenRevocation(config, refreshed.access_token);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    await expect(oidc.fetchUserInfo(config, refreshed.access_token, sub)).rejects.toMatchObject({ status: 401 });
    // The spent refresh token, replayed at the other instance, ends the grant there and here.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });

    // The browser's sign-in, kept by one instance, is the other's too: a new authorization skips the pages.
    const silently = () => {
      const again = new URL('/oauth/authorize', SHARED_BASE_URL);
      again.search = new URLSearchParams({
        client_id: clientId,
        redirect_uri: CALLBACK,
        response_type: 'code',
        scope: 'openid',
      }).toString();
      return browser.go(again.href);
    };
    const skipped = await silently();
    expect(new URL(skipped.location ?? 'http://none/').searchParams.get('code'), `${trail.join('\n')}\n${skipped.body}`).toBeTruthy();
    // RP-initiated logout: the question on one instance, the answer on the other; then the password is asked again.
    const question = await browser.go(`/oauth/logout?client_id=${clientId}`);
    expect(question.status, question.body).toBe(200);
    const action = /<form[^>]*action="([^"]+)"/.exec(question.body)?.[1] as string;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const signedOut = await browser.go(action, { xsrf, logout: 'yes' });
    expect([signedOut.status, signedOut.body.includes('You are signed out')], `${trail.join('\n')}\n${signedOut.body}`).toEqual([
      200,
      true,
    ]);
    for (let i = 0; i < 2; i += 1) {
      const asked = await silently();
      expect([asked.status, asked.body.includes('autocomplete="current-password"')], asked.body).toEqual([200, true]);
    }

    const served = (path: string) => new Set(trail.filter((t) => t.endsWith(` ${path}`) || t.includes(` ${path}/`)).map((t) => t[0]));
    for (const path of ['/oauth/authorize', '/oauth/interaction', '/oauth/token', '/oauth/userinfo', '/oauth/introspect', '/oauth/logout'])
      expect(served(path), `${path} in\n${trail.join('\n')}`).toEqual(new Set(['A', 'B']));
  });

  it('finishes a social sign-in started on one instance on the other, and its code is spent for both', async () => {
    trail = [];
    const put = await request(a.url, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: API_KEY,
      ip: freshIp(),
      body: { client_id: 'identity-service', client_secret: 'idp-client-secret', issuer: idp.issuer, display_name: 'Twin ID' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const email = `social-${Date.now()}@faults.test`;
    const ip = freshIp();
    const started = await alternate('GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${tenant}`, { ip });
    expect(started.status, started.body).toBe(302);
    idp.signInAs({ sub: `sub-${email}`, claims: { email, email_verified: true } });
    const callback = await idp.authorize(started.headers.get('location') as string);
    const back = await alternate('GET', `${callback.pathname}${callback.search}`, { ip });
    expect(back.status, `${trail.join('\n')}\n${back.body}`).toBe(303);
    const code = new URL(back.headers.get('location') as string).searchParams.get('code');
    expect(code, back.headers.get('location') ?? '').toBeTruthy();
    const exchanged = await alternate('POST', '/api/v1/auth/oauth/exchange', { ip, body: { code } });
    expect(exchanged.status, exchanged.body).toBe(200);
    const session = JSON.parse(exchanged.body) as { data: { user: { email: string }; access_token: string } };
    expect(session.data.user.email).toBe(email);
    const again = await alternate('POST', '/api/v1/auth/oauth/exchange', { ip, body: { code } });
    expect(again.status).toBe(401);
    const replayed = await alternate('GET', `${callback.pathname}${callback.search}`, { ip });
    expect(replayed.status).not.toBe(303);
    for (const app of [a, b]) expect((await sessionsCall(app.url, session.data.access_token)).status).toBe(200);
  });

  it('completes an API sign-in’s second factor on the other instance, once', async () => {
    const user = await userWithTotp(a.url, tenant);
    const challenge = await signIn(a.url, tenant, user.email);
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    const mfaToken = text(challenge, 'data.mfa_token');
    const code = nextStepCode(user.totp);
    const verified = await request(b.url, 'POST', '/api/v1/auth/mfa/verify', {
      ip: freshIp(),
      tenant,
      body: { mfa_token: mfaToken, code },
    });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect((await sessionsCall(a.url, text(verified, 'data.access_token'))).status).toBe(200);
    const twice = await request(a.url, 'POST', '/api/v1/auth/mfa/verify', { ip: freshIp(), tenant, body: { mfa_token: mfaToken, code } });
    expect([twice.status, errorCode(twice)]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('resets a password asked for on one instance on the other; the link works once', async () => {
    const user = await createUser(a.url, 'reset');
    const asked = await request(a.url, 'POST', '/api/v1/auth/password/forgot', { ip: freshIp(), tenant, body: { email: user.email } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    const password = 'a new twin password 7';
    const reset = await request(b.url, 'POST', '/api/v1/auth/password/reset', { ip: freshIp(), tenant, body: { token, password } });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect((await signIn(a.url, tenant, user.email, password)).status).toBe(200);
    expect((await signIn(b.url, tenant, user.email)).status).toBe(401);
    const again = await request(a.url, 'POST', '/api/v1/auth/password/reset', {
      ip: freshIp(),
      tenant,
      body: { token, password: 'yet another password 8' },
    });
    expect(again.status).toBe(401);
  });

  it('locks an account after ten wrong passwords split across both instances', async () => {
    const user = await createUser(a.url, 'lockout');
    for (let i = 0; i < 10; i += 1) {
      const wrong = await signIn(i % 2 === 0 ? a.url : b.url, tenant, user.email, 'not the password at all');
      expect([wrong.status, errorCode(wrong)], `attempt ${i + 1}`).toEqual([401, 'INVALID_CREDENTIALS']);
    }
    for (const app of [a, b]) {
      const right = await signIn(app.url, tenant, user.email);
      expect([right.status, errorCode(right)]).toEqual([403, 'ACCOUNT_LOCKED']);
    }
  });

  it('detects a refresh token replayed at the other instance and ends the session on both', async () => {
    const user = await createUser(a.url, 'reuse');
    const first = await signedIn(a.url, tenant, user.email);
    const rotated = await request(b.url, 'POST', '/api/v1/auth/refresh', { ip: freshIp(), body: { refresh_token: first.refresh } });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const second = tokensOf(rotated);
    const replay = await request(a.url, 'POST', '/api/v1/auth/refresh', { ip: freshIp(), body: { refresh_token: first.refresh } });
    expect([replay.status, errorCode(replay)]).toEqual([401, 'INVALID_TOKEN']);
    const newer = await request(b.url, 'POST', '/api/v1/auth/refresh', { ip: freshIp(), body: { refresh_token: second.refresh } });
    expect([newer.status, errorCode(newer)]).toEqual([401, 'INVALID_TOKEN']);
    for (const app of [a, b]) expect(errorCode(await sessionsCall(app.url, second.access))).toBe('INVALID_TOKEN');
  });

  it('accepts on one instance an invitation sent by the other, once', async () => {
    const email = `invited-${Date.now()}@faults.test`;
    const invited = await request(a.url, 'POST', '/api/v1/invitations', { token: API_KEY, ip: freshIp(), body: { email } });
    expect(invited.status, JSON.stringify(invited.body)).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const accepted = await request(b.url, 'POST', '/api/v1/invitations/accept', {
      ip: freshIp(),
      body: { token, password: 'invited twin password' },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect((await sessionsCall(a.url, text(accepted, 'data.access_token'))).status).toBe(200);
    const again = await request(a.url, 'POST', '/api/v1/invitations/accept', {
      ip: freshIp(),
      body: { token, password: 'invited twin password' },
    });
    expect(again.status).toBe(401);
  });

  it('sets up SAML through an Admin Portal link opened on the other instance, then signs in starting on one and posting to the other', async () => {
    trail = [];
    const ip = freshIp();
    const domain = `twin-${Date.now()}.test`;
    const org = await alternate('POST', '/api/v1/organizations', { ip, token: API_KEY, body: { name: 'Twin Co', domains: [domain] } });
    expect(org.status, org.body).toBe(201);
    const orgId = (JSON.parse(org.body) as { data: { id: string } }).data.id;
    const link = await alternate('POST', '/api/v1/organizations/portal-link', { ip, token: API_KEY, body: { organization_id: orgId } });
    expect(link.status, link.body).toBe(201);
    const portalLink = (JSON.parse(link.body) as { data: { link: string } }).data.link;
    const opened = await alternate('GET', portalLink, { ip });
    expect(opened.status).toBe(303);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^portal_session=/);
    const page = await alternate('GET', '/portal/sso', { ip, cookie });
    expect([page.status, page.body.includes('Twin Co')]).toEqual([200, true]);
    expect((await alternate('GET', portalLink, { ip })).status).toBe(401);

    const key = fixtureKey('idp');
    const idpEntity = `https://idp.${domain}/saml`;
    const metadata = idpMetadataXml({ entityId: idpEntity, ssoUrl: `https://idp.${domain}/sso`, certs: [key.certBase64] });
    const saved = await alternate('POST', '/portal/sso/saml', { ip, cookie, form: { metadata_xml: metadata } });
    expect(saved.status, `${trail.join('\n')}\n${saved.body}`).toBe(200);
    const shown = await alternate('GET', `/api/v1/organizations/${orgId}/sso-connection`, { ip, token: API_KEY });
    const sp = (JSON.parse(shown.body) as { data: { service_provider: { entity_id: string; acs_url: string } } }).data.service_provider;

    const email = `peter@${domain}`;
    const started = await alternate('GET', `/api/v1/auth/sso/start?workspace_id=${tenant}&email=${email}&state=twin-state`, { ip });
    expect(started.status, started.body).toBe(302);
    const toIdp = new URL(started.headers.get('location') as string);
    const authnRequest = inflateRawSync(Buffer.from(toIdp.searchParams.get('SAMLRequest') as string, 'base64')).toString();
    const requestId = /ID="([^"]+)"/.exec(authnRequest)?.[1] as string;
    const response = signSamlXml(
      samlResponseXml({
        sp: { entityId: sp.entity_id, acsUrl: sp.acs_url },
        idp: { entity_id: idpEntity },
        inResponseTo: requestId,
        nameId: email,
      }),
      key,
      'assertion',
    );
    const form = { SAMLResponse: toBase64(response), RelayState: toIdp.searchParams.get('RelayState') as string };
    const accepted = await alternate('POST', new URL(sp.acs_url).pathname, { ip, form });
    expect(accepted.status, `${trail.join('\n')}\n${accepted.body}`).toBe(303);
    const back = new URL(accepted.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('twin-state');
    const exchanged = await alternate('POST', '/api/v1/auth/oauth/exchange', { ip, body: { code: back.searchParams.get('code') } });
    expect(exchanged.status, exchanged.body).toBe(200);
    expect((JSON.parse(exchanged.body) as { data: { user: { email: string } } }).data.user.email).toBe(email);
    const replayed = await alternate('POST', new URL(sp.acs_url).pathname, { ip, form });
    expect(replayed.status).toBe(401);
    const served = new Set(trail.map((t) => t[0]));
    expect(served).toEqual(new Set(['A', 'B']));
  });

  it('counts an account’s second-factor codes across both: five wrong, the sixth is 429 wherever it lands', async () => {
    const user = await userWithTotp(a.url, tenant);
    const challenge = await signIn(b.url, tenant, user.email);
    const mfaToken = text(challenge, 'data.mfa_token');
    const verify = (app: AppProcess) =>
      request(app.url, 'POST', '/api/v1/auth/mfa/verify', { ip: freshIp(), tenant, body: { mfa_token: mfaToken, code: '000000' } });
    for (let i = 0; i < 5; i += 1) {
      const wrong = await verify(i % 2 === 0 ? a : b);
      expect([wrong.status, errorCode(wrong)], `code ${i + 1}`).toEqual([401, 'INVALID_CODE']);
    }
    for (const app of [a, b]) {
      const limited = await verify(app);
      expect([limited.status, errorCode(limited)], `on ${nameOf(app)}`).toEqual([429, 'RATE_LIMITED']);
    }
  });

  it('lets exactly one of concurrent uses of a refresh token or an authorization code win, split across both', async () => {
    const user = await createUser(a.url, 'race');
    const { refresh } = await signedIn(a.url, tenant, user.email);
    const refreshes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request((i % 2 === 0 ? a : b).url, 'POST', '/api/v1/auth/refresh', { ip: freshIp(), body: { refresh_token: refresh } }),
      ),
    );
    expect(refreshes.filter((r) => r.status === 200)).toHaveLength(1);
    expect(refreshes.filter((r) => r.status === 401 && errorCode(r) === 'INVALID_TOKEN')).toHaveLength(19);

    const created = await request(a.url, 'POST', '/api/v1/applications', {
      token: API_KEY,
      ip: freshIp(),
      body: { name: 'Twin Race', type: 'web', redirect_uris: [CALLBACK] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const clientId = text(created, 'data.id');
    const secret = text(created, 'data.client_secret');
    const authorize = new URL('/oauth/authorize', SHARED_BASE_URL);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid',
    }).toString();
    const browser = new Browser();
    const login = await browser.go(authorize.href);
    expect(login.status, login.body).toBe(200);
    const done = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: USER_PASSWORD });
    const code = new URL(done.location as string).searchParams.get('code') as string;
    expect(code, done.body).toBeTruthy();
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
    const exchanges = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        fetch(`${(i % 2 === 0 ? a : b).url}/oauth/token`, {
          method: 'POST',
          headers: {
            ...BALANCER_HEADERS,
            authorization: basic,
            'content-type': 'application/x-www-form-urlencoded',
            'x-forwarded-for': freshIp(),
          },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }).toString(),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as { error?: string } })),
      ),
    );
    expect(
      exchanges.filter((e) => e.status === 200),
      JSON.stringify(exchanges),
    ).toHaveLength(1);
    expect(exchanges.filter((e) => e.status === 400 && e.body.error === 'invalid_grant')).toHaveLength(7);
  });

  /**
   * `npm run cli -- …` against the instances' database, as an operator runs it beside them: its JSON
   * answer. Not spawnSync: while it blocked this process's event loop for the seconds the CLI takes,
   * an instance could close an idle keep-alive connection to it unseen, and the next request sent on
   * that connection failed with `other side closed`.
   */
  async function cli(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_ENV: 'test', DATABASE_URL: pg.url, VAULT_MASTER_KEY: MASTER_KEY },
    }).catch((error: unknown) => {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      throw new Error(`cli ${args.join(' ')} exited ${String(failed.code)}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  const publishedKids = async (app: AppProcess) =>
    ((await request(app.url, 'GET', '/.well-known/jwks.json', { ip: freshIp() })).body as { keys: { kid: string }[] }).keys.map(
      (k) => k.kid,
    );

  // Last: it revokes the key every other test's tokens are signed with.
  it('publishes a key rotated from the CLI on both instances at once, and both refuse a revoked key’s tokens and sign with another at once', async () => {
    const user = await createUser(a.url, 'keys');
    const before = await signedIn(a.url, tenant, user.email);
    const leaked = decodeProtectedHeader(before.access).kid as string;
    // Both instances have checked the token's signature and remember it.
    for (const app of [b, a]) expect((await sessionsCall(app.url, before.access)).status).toBe(200);

    const rotated = (await cli('keys', 'rotate')).kid as string;
    for (const app of [b, a]) expect(await publishedKids(app)).toEqual(expect.arrayContaining([leaked, rotated]));

    expect(await cli('keys', 'revoke', leaked)).toMatchObject({ kid: leaked, signing_kid: rotated });
    // Neither instance has checked a token since: each signs its next token with the rotation's key.
    const after = [await signedIn(b.url, tenant, user.email), await signedIn(a.url, tenant, user.email)];
    expect(after.map((tokens) => decodeProtectedHeader(tokens.access).kid)).toEqual([rotated, rotated]);
    for (const app of [b, a]) {
      const refused = await sessionsCall(app.url, before.access);
      expect([refused.status, errorCode(refused)], `on ${nameOf(app)}`).toEqual([401, 'INVALID_TOKEN']);
      expect(await publishedKids(app)).not.toContain(leaked);
      for (const tokens of after) expect((await sessionsCall(app.url, tokens.access)).status).toBe(200);
    }
  });

  it('signs no id_token with an RS256 key revoked from the CLI, on either instance, from the next request on; neither publishes it or takes it in an id_token_hint', async () => {
    const user = await createUser(a.url, 'idtok');
    const created = await request(a.url, 'POST', '/api/v1/applications', {
      token: API_KEY,
      ip: freshIp(),
      body: { name: 'Twin Keys', type: 'web', redirect_uris: [CALLBACK] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const clientId = text(created, 'data.id');
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(text(created, 'data.client_secret'))}`).toString('base64')}`;
    const authorize = new URL('/oauth/authorize', SHARED_BASE_URL);
    authorize.search = new URLSearchParams({
      client_id: clientId,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid',
    }).toString();
    const codeOf = (page: Page) => new URL(page.location ?? 'http://none/').searchParams.get('code') as string;
    const exchange = async (app: AppProcess, code: string) => {
      const res = await fetch(`${app.url}/oauth/token`, {
        method: 'POST',
        headers: {
          ...BALANCER_HEADERS,
          authorization: basic,
          'content-type': 'application/x-www-form-urlencoded',
          'x-forwarded-for': freshIp(),
        },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }).toString(),
      });
      const body = (await res.json()) as { id_token?: string; access_token?: string };
      expect(res.status, `on ${nameOf(app)}: ${JSON.stringify(body)}`).toBe(200);
      return body.id_token as string;
    };

    const browser = new Browser();
    const login = await browser.go(authorize.href);
    const first = codeOf(await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: USER_PASSWORD }));
    const hint = await exchange(b, first);
    const leaked = decodeProtectedHeader(hint).kid as string;
    expect(decodeProtectedHeader(hint).alg).toBe('RS256');
    // The browser's sign-in gives a second code at once: only its token request is left.
    const second = codeOf(await browser.go(authorize.href));
    expect(second).toBeTruthy();

    const revoked = await cli('keys', 'revoke', leaked);
    expect(revoked).toMatchObject({ kid: leaked, alg: 'RS256' });
    const fresh = revoked.signing_kid as string;
    expect(fresh).not.toBe(leaked);
    // Each instance's 5-second change check may or may not have run since: neither answer may depend on it.
    const idToken = await exchange(b, second);
    expect(decodeProtectedHeader(idToken).kid, 'the id_token B signed right after the revocation').toBe(fresh);
    const logout = await fetch(`${a.url}/oauth/logout?${new URLSearchParams({ id_token_hint: hint })}`, {
      headers: { ...BALANCER_HEADERS, 'x-forwarded-for': freshIp() },
    });
    expect([logout.status, await logout.text()], 'an id_token_hint of the revoked key on A').toEqual([
      400,
      expect.stringContaining('could not validate id_token_hint'),
    ]);

    // A relying party that fetched the JWKS again, from the other instance, checks it.
    const jwks = (await request(a.url, 'GET', '/.well-known/jwks.json', { ip: freshIp() })).body as JSONWebKeySet;
    await expect(jwtVerify(idToken, createLocalJWKSet(jwks), { issuer: SHARED_BASE_URL, audience: clientId })).resolves.toBeTruthy();
    for (const app of [a, b]) {
      const kids = await publishedKids(app);
      expect(kids, `on ${nameOf(app)}`).toContain(fresh);
      expect(kids, `on ${nameOf(app)}`).not.toContain(leaked);
    }
  });
});
