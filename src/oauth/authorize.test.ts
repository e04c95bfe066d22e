import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { someIp } from '../../test/helpers/auth.ts';
import { Browser, formAction } from '../../test/helpers/browser.ts';
import { basicAuth, call } from '../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../test/helpers/workspace.ts';

const PASSWORD = 'authorize endpoint passphrase';
const CALLBACK = 'https://rp.example.com/auth/callback';
const SPA_CALLBACK = 'https://spa.example.com/callback';

/** `/oauth/authorize` and the discovery documents: what the RFCs and OpenID Connect ask of them. */
describe('authorization endpoint and discovery', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let web: { id: string; secret: string };
  let spaId: string;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Authorize Co');
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Portal', type: 'web', redirect_uris: [CALLBACK] },
    });
    web = { id: created.body.data.id, secret: created.body.data.client_secret };
    const spa = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'SPA', type: 'spa', redirect_uris: [SPA_CALLBACK] },
    });
    spaId = spa.body.data.id;
  });
  afterAll(() => app.close());

  function relyingParty(clientId = web.id, auth: oidc.ClientAuth = oidc.ClientSecretBasic(web.secret)): Promise<oidc.Configuration> {
    const ip = someIp();
    return oidc.discovery(new URL(app.url), clientId, undefined, auth, {
      execute: [oidc.allowInsecureRequests],
      [oidc.customFetch]: (url, options) =>
        fetch(url, { ...options, body: options.body as RequestInit['body'], headers: { ...options.headers, 'x-forwarded-for': ip } }),
    });
  }

  async function newUser(workspace = ws) {
    const email = uniqueEmail('authz');
    const created = await call(app, 'POST', '/api/v1/users', { token: workspace.apiKey, body: { email, password: PASSWORD } });
    expect(created.status).toBe(201);
    return { email, id: created.body.data.id as string };
  }

  function authorizeUrl(params: Record<string, string>): string {
    return `${app.url}/oauth/authorize?${new URLSearchParams(params).toString()}`;
  }

  async function pkce() {
    const verifier = oidc.randomPKCECodeVerifier();
    return { verifier, challenge: await oidc.calculatePKCECodeChallenge(verifier) };
  }

  async function codeRequest(extra: Record<string, string> = {}) {
    const { verifier, challenge } = await pkce();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const params = {
      client_id: web.id,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid email offline_access',
      prompt: 'consent',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    };
    return { url: authorizeUrl(params), verifier, state: params.state, nonce: params.nonce };
  }

  /** Signs in on the hosted page and answers where the browser is sent back to. */
  async function signInThrough(browser: Browser, url: string, email: string): Promise<URL> {
    const login = await browser.go(url);
    expect(login.status, login.body).toBe(200);
    const done = await browser.go(formAction(login.body, 'Sign in'), { email, password: PASSWORD });
    expect(done.location, done.body).toBeDefined();
    return new URL(done.location as string);
  }

  describe('discovery (OpenID conformance "Config OP")', () => {
    it('publishes the issuer, the exact endpoints and the required fields', async () => {
      const res = await fetch(`${app.url}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const doc = await res.json();
      expect(doc.issuer).toBe(app.deps.config.BASE_URL);
      expect(doc).toMatchObject({
        authorization_endpoint: `${app.url}/oauth/authorize`,
        token_endpoint: `${app.url}/oauth/token`,
        userinfo_endpoint: `${app.url}/oauth/userinfo`,
        revocation_endpoint: `${app.url}/oauth/revoke`,
        introspection_endpoint: `${app.url}/oauth/introspect`,
        jwks_uri: `${app.url}/.well-known/jwks.json`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['RS256'],
        subject_types_supported: ['public'],
      });
      expect(doc.scopes_supported).toEqual(expect.arrayContaining(['openid', 'email', 'profile', 'offline_access']));
      expect(doc.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'name']));
      expect(doc.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials']));
      expect(doc.grant_types_supported).not.toContain('implicit');
      expect(doc.token_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(['client_secret_basic', 'client_secret_post']));
      expect(doc.response_modes_supported).toEqual(expect.arrayContaining(['query']));
      const oauthDoc = await (await fetch(`${app.url}/.well-known/oauth-authorization-server`)).json();
      expect(oauthDoc.issuer).toBe(doc.issuer);
    });

    it('lets clients and caches keep the discovery documents five minutes; the JWKS keeps its own header', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        for (const method of ['GET', 'HEAD']) {
          const res = await fetch(`${app.url}${path}`, { method });
          expect([res.status, res.headers.get('cache-control')], `${method} ${path}`).toEqual([200, 'public, max-age=300']);
        }
      }
      const refused = await fetch(`${app.url}/.well-known/openid-configuration`, {
        method: 'POST',
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(refused.status).toBe(405);
      expect(refused.headers.get('cache-control')).not.toBe('public, max-age=300');
      expect((await fetch(`${app.url}/.well-known/jwks.json`)).headers.get('cache-control')).toBe('public, max-age=60');
    });

    it('answers a method a protocol endpoint does not take 405 with Allow and an RFC 6749 body, and keeps the ones it takes', async () => {
      const cases = [
        ['GET', '/oauth/token', 'POST, OPTIONS'],
        ['PUT', '/oauth/token', 'POST, OPTIONS'],
        ['GET', '/oauth/revoke', 'POST, OPTIONS'],
        ['GET', '/oauth/introspect', 'POST, OPTIONS'],
        ['DELETE', '/oauth/userinfo', 'GET, HEAD, POST, OPTIONS'],
        ['PUT', '/oauth/authorize', 'GET, HEAD, POST'],
        ['POST', '/.well-known/openid-configuration', 'GET, HEAD, OPTIONS'],
        ['POST', '/.well-known/oauth-authorization-server', 'GET, HEAD, OPTIONS'],
        ['POST', '/.well-known/jwks.json', 'GET, HEAD, OPTIONS'],
      ] as const;
      for (const [method, path, allow] of cases) {
        const res = await fetch(`${app.url}${path}`, { method, headers: { 'x-forwarded-for': someIp() } });
        const label = `${method} ${path}`;
        expect(res.status, label).toBe(405);
        expect(res.headers.get('allow'), label).toBe(allow);
        expect(res.headers.get('x-request-id'), label).toBeTruthy();
        expect(res.headers.get('content-type'), label).toContain('application/json');
        expect(await res.json(), label).toEqual({ error: 'invalid_request', error_description: expect.stringContaining(method) });
      }
      // The methods they take still reach them.
      const discovery = await fetch(`${app.url}/.well-known/openid-configuration`, { method: 'HEAD' });
      expect(discovery.status).toBe(200);
      const token = await fetch(`${app.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': someIp() },
        body: 'grant_type=client_credentials',
      });
      expect([token.status, (await token.json()).error]).toEqual([401, 'invalid_client']);
      const userinfo = await fetch(`${app.url}/oauth/userinfo`, { method: 'POST', headers: { 'x-forwarded-for': someIp() } });
      expect(userinfo.status).toBe(401);
      expect((await fetch(`${app.url}/.well-known/jwks.json`)).status).toBe(200);
    });

    it('is described in the OpenAPI document with the other protocol endpoints', async () => {
      const { paths } = await (await fetch(`${app.url}/api/v1/openapi.json`)).json();
      for (const [path, method] of [
        ['/oauth/authorize', 'get'],
        ['/oauth/authorize', 'post'],
        ['/oauth/token', 'post'],
        ['/oauth/userinfo', 'get'],
        ['/oauth/revoke', 'post'],
        ['/oauth/introspect', 'post'],
        ['/.well-known/openid-configuration', 'get'],
        ['/.well-known/jwks.json', 'get'],
        ['/api/v1/applications/{id}/rotate-secret', 'post'],
      ]) {
        expect(paths[path as string], path).toHaveProperty(method as string);
      }
    });

    it('describes every status userinfo answers: 400 malformed, 401 no or bad token, 403 insufficient_scope', async () => {
      const { paths } = await (await fetch(`${app.url}/api/v1/openapi.json`)).json();
      for (const method of ['get', 'post']) {
        const responses = paths['/oauth/userinfo'][method].responses;
        expect(Object.keys(responses), method).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
      }
      // Each one answered as described: a token in the query is malformed, no token is 401.
      const query = await fetch(`${app.url}/oauth/userinfo?access_token=abc`, { headers: { 'x-forwarded-for': someIp() } });
      expect(query.status).toBe(400);
      expect((await query.json()).error).toBe('invalid_request');
    });

    it('serves one JWKS: the RS256 id_token key beside the EdDSA access-token key, no private members', async () => {
      const res = await fetch(`${app.url}/.well-known/jwks.json`);
      expect(res.status).toBe(200);
      const { keys } = await res.json();
      const algs = keys.map((k: { alg: string }) => k.alg);
      expect(algs).toContain('RS256');
      expect(algs).toContain('EdDSA');
      for (const key of keys) {
        expect(key.use).toBe('sig');
        expect(key.kid).toBeTruthy();
        for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key, `${key.kid} ${secret}`).not.toHaveProperty(secret);
      }
      expect(new Set(keys.map((k: { kid: string }) => k.kid)).size).toBe(keys.length);
      const rsa = keys.find((k: { alg: string }) => k.alg === 'RS256');
      expect(rsa).toMatchObject({ kty: 'RSA', e: 'AQAB' });
      expect(Buffer.from(rsa.n, 'base64url').length).toBeGreaterThanOrEqual(256);
    });
  });

  describe('redirect URIs', () => {
    it.each([
      ['an extra query', `${CALLBACK}?next=/admin`],
      ['a trailing slash', `${CALLBACK}/`],
      ['another host', 'https://evil.example.com/auth/callback'],
      ['the userinfo trick', 'https://rp.example.com@evil.example.com/auth/callback'],
      ['another scheme', 'http://rp.example.com/auth/callback'],
      ['another case', 'https://RP.example.com/auth/callback'],
      ['a sub-path', `${CALLBACK}/more`],
      ['a fragment', `${CALLBACK}#frag`],
    ])('never redirects to a mismatch: %s', async (_label, redirectUri) => {
      const { url } = await codeRequest({ redirect_uri: redirectUri });
      const res = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html', 'x-forwarded-for': someIp() } });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const body = await res.text();
      expect(body).toContain('invalid_redirect_uri');
      expect(body).not.toContain('evil.example.com');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    });

    it('never redirects without a redirect_uri or for an unknown client', async () => {
      const { url } = await codeRequest({ redirect_uri: '' });
      const missing = await fetch(url.replace('redirect_uri=&', ''), { redirect: 'manual' });
      expect(missing.status).toBe(400);
      expect(missing.headers.get('location')).toBeNull();
      expect(await missing.text()).toContain('invalid_request');
      const unknown = await codeRequest({ client_id: 'app_00000000000000000000000000' });
      const res = await fetch(unknown.url, { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      // A browser asks for HTML and gets a page, not JSON.
      const page = await fetch(unknown.url, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(page.status).toBe(400);
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('invalid_client');
    });
  });

  describe('authorization requests', () => {
    it('requires PKCE S256 from public clients and refuses other response types, back at the registered URI', async () => {
      const browser = new Browser(app.url);
      const base = { client_id: spaId, response_type: 'code', redirect_uri: SPA_CALLBACK, scope: 'openid', state: 'st-1' };
      const noPkce = await browser.go(authorizeUrl(base));
      expect(new URL(noPkce.location as string).searchParams.get('error')).toBe('invalid_request');
      expect(new URL(noPkce.location as string).searchParams.get('state')).toBe('st-1');
      const plain = await browser.go(authorizeUrl({ ...base, code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }));
      expect(new URL(plain.location as string).searchParams.get('error')).toBe('invalid_request');
      const { challenge } = await pkce();
      const implicit = await browser.go(
        authorizeUrl({ ...base, response_type: 'token', code_challenge: challenge, code_challenge_method: 'S256' }),
      );
      // The error of an implicit request travels in the fragment, as that response type would have.
      const back = new URL(implicit.location as string);
      expect(back.origin + back.pathname).toBe(SPA_CALLBACK);
      expect(new URLSearchParams(back.hash.slice(1)).get('error')).toBe('unsupported_response_type');
    });

    it('serves a request without scope with the default, openid (RFC 6749 §3.3), instead of failing after sign-in', async () => {
      const user = await newUser();
      const request = await codeRequest();
      const url = new URL(request.url);
      url.searchParams.delete('scope');
      const callback = await signInThrough(new Browser(app.url), url.toString(), user.email);
      expect(callback.searchParams.get('error')).toBeNull();
      const tokens = await oidc.authorizationCodeGrant(await relyingParty(), callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(tokens.scope).toBe('openid');
      expect(tokens.claims()?.sub).toBe(user.id);
    });

    it('answers a scope it can grant nothing of invalid_scope at once, back at the client, instead of access_denied after sign-in', async () => {
      const browser = new Browser(app.url);
      const { challenge } = await pkce();
      const base = {
        client_id: web.id,
        response_type: 'code',
        redirect_uri: CALLBACK,
        state: 'st-scope',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      for (const [scope, extra] of [
        ['read:reports', {}],
        ['offline_access', {}],
        ['offline_access', { prompt: 'login' }],
      ] as const) {
        const refused = await browser.go(authorizeUrl({ ...base, scope, ...extra }));
        expect(refused.location, `${scope} ${refused.body}`).toBeDefined();
        const back = new URL(refused.location as string);
        expect(back.origin + back.pathname).toBe(CALLBACK);
        expect([back.searchParams.get('error'), back.searchParams.get('state')], scope).toEqual(['invalid_scope', 'st-scope']);
        expect(back.searchParams.get('iss')).toBe(app.url);
        // RFC 6749 §4.1.2.1's parameters only: oidc-provider's InvalidScope added `scope=` (empty or the value refused).
        expect([...back.searchParams.keys()].sort(), scope).toEqual(['error', 'error_description', 'iss', 'state']);
      }
      // A known value beside unknown ones is served; the unknown ones are ignored (OpenID Connect Core 3.1.2.1).
      const user = await newUser();
      const request = await codeRequest({ scope: 'openid read:reports', prompt: '' });
      const callback = await signInThrough(new Browser(app.url), request.url, user.email);
      const tokens = await oidc.authorizationCodeGrant(await relyingParty(), callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(tokens.scope).toBe('openid');
      // offline_access with prompt=consent, and no other scope, is a refresh token for an OAuth client.
      const offline = await codeRequest({ scope: 'offline_access', nonce: '' });
      const url = new URL(offline.url);
      url.searchParams.delete('nonce');
      const back = await signInThrough(new Browser(app.url), url.toString(), user.email);
      expect(back.searchParams.get('code')).toBeTruthy();
    });

    it('returns state and nonce verbatim', async () => {
      const user = await newUser();
      const state = 'a b+c/=é&x=%41 ~';
      const nonce = 'n-0/1+2 ü';
      const request = await codeRequest({ state, nonce });
      const callback = await signInThrough(new Browser(app.url), request.url, user.email);
      expect(callback.searchParams.get('state')).toBe(state);
      const config = await relyingParty();
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: state,
        expectedNonce: nonce,
      });
      expect(tokens.claims()?.nonce).toBe(nonce);
    });

    it('takes the authorization request as a form POST too (OpenID Connect Core 3.1.2.1), answered as GET is', async () => {
      const user = await newUser();
      const browser = new Browser(app.url);
      const request = await codeRequest();
      const login = await browser.go(`${app.url}/oauth/authorize`, Object.fromEntries(new URL(request.url).searchParams));
      expect(login.status, login.body).toBe(200);
      const done = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: PASSWORD });
      const callback = new URL(done.location as string);
      expect(callback.origin + callback.pathname).toBe(CALLBACK);
      expect(callback.searchParams.get('state')).toBe(request.state);
      const tokens = await oidc.authorizationCodeGrant(await relyingParty(), callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect(tokens.claims()?.sub).toBe(user.id);

      // A silent POST of the signed-in browser gets its code at once, and one without scope the default.
      // Over plain http the browser session is SameSite=Lax: browsers drop a SameSite=None cookie that
      // is not Secure (over https it is None, proxy.test.ts).
      const sessionCookie = done.headers.getSetCookie().find((c) => c.startsWith('_session='));
      expect(sessionCookie?.toLowerCase()).toContain('samesite=lax');
      expect(sessionCookie?.toLowerCase()).not.toContain('samesite=none');
      const silent = await codeRequest({ prompt: 'none', state: 'post-silent' });
      const params = Object.fromEntries(new URL(silent.url).searchParams);
      delete params.scope;
      const back = new URL((await browser.go(`${app.url}/oauth/authorize`, params)).location as string);
      expect(back.searchParams.get('state')).toBe('post-silent');
      const silentTokens = await oidc.authorizationCodeGrant(await relyingParty(), back, {
        pkceCodeVerifier: silent.verifier,
        expectedState: 'post-silent',
        expectedNonce: silent.nonce,
      });
      expect(silentTokens.scope).toBe('openid');
    });

    it('prompt=none: login_required without a session; a code with one. prompt=login and max_age=0 ask again', async () => {
      const user = await newUser();
      const browser = new Browser(app.url);
      const silent = await browser.go((await codeRequest({ prompt: 'none', state: 'silent-1' })).url);
      const refused = new URL(silent.location as string);
      expect(refused.origin + refused.pathname).toBe(CALLBACK);
      expect(refused.searchParams.get('error')).toBe('login_required');
      expect(refused.searchParams.get('state')).toBe('silent-1');

      await signInThrough(browser, (await codeRequest()).url, user.email);
      const sso = await browser.go((await codeRequest({ prompt: 'none' })).url);
      expect(new URL(sso.location as string).searchParams.get('code')).toBeTruthy();

      const forced: Record<string, string>[] = [{ prompt: 'login' }, { max_age: '0', prompt: 'consent' }];
      for (const extra of forced) {
        const again = await browser.go((await codeRequest(extra)).url);
        expect(again.status, JSON.stringify(extra)).toBe(200);
        expect(again.body).toContain('autocomplete="current-password"');
        const done = await browser.go(formAction(again.body, 'Sign in'), { email: user.email, password: PASSWORD });
        expect(new URL(done.location as string).searchParams.get('code')).toBeTruthy();
      }
    });

    it('a code used twice is invalid_grant, and the tokens issued from it stop working', async () => {
      const user = await newUser();
      const request = await codeRequest();
      const callback = await signInThrough(new Browser(app.url), request.url, user.email);
      const config = await relyingParty();
      const checks = { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce };
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(true);

      await expect(oidc.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });

      await expect
        .poll(async () =>
          (
            await app.deps.orm.em
              .fork()
              .getConnection()
              .execute<{ event_type: string }[]>(
                "select event_type from audit_events where workspace_id = ? and target_id = ? and event_type like 'oauth.%'",
                [ws.id, web.id],
              )
          ).map((r) => r.event_type),
        )
        .toEqual(expect.arrayContaining(['oauth.token', 'oauth.grant_revoke']));
    });

    it('refuses a wrong code_verifier, another client’s code and a mismatched redirect_uri at the token endpoint', async () => {
      const user = await newUser();
      const request = await codeRequest();
      const callback = await signInThrough(new Browser(app.url), request.url, user.email);
      const code = callback.searchParams.get('code') as string;
      const post = (body: Record<string, string>) =>
        fetch(`${app.url}/oauth/token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: basicAuth(web.id, web.secret),
            'x-forwarded-for': someIp(),
          },
          body: new URLSearchParams(body).toString(),
        });
      const wrongVerifier = await post({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
        code_verifier: oidc.randomPKCECodeVerifier(),
      });
      expect(wrongVerifier.status).toBe(400);
      expect((await wrongVerifier.json()).error).toBe('invalid_grant');
      const otherRedirect = await post({
        grant_type: 'authorization_code',
        code,
        redirect_uri: `${CALLBACK}/`,
        code_verifier: request.verifier,
      });
      expect(otherRedirect.status).toBe(400);
      expect((await otherRedirect.json()).error).toBe('invalid_grant');
    });

    it('cancel sends access_denied back to the client', async () => {
      const browser = new Browser(app.url);
      const request = await codeRequest({ state: 'cancel-1' });
      const login = await browser.go(request.url);
      const cancelled = await browser.go(formAction(login.body, 'Cancel'), {});
      const back = new URL(cancelled.location as string);
      expect(back.searchParams.get('error')).toBe('access_denied');
      expect(back.searchParams.get('state')).toBe('cancel-1');
    });

    it('RP-initiated logout asks, then ends the browser session', async () => {
      const user = await newUser();
      const browser = new Browser(app.url);
      await signInThrough(browser, (await codeRequest()).url, user.email);
      // RP-Initiated Logout 2: the end-session endpoint takes POST as well as GET.
      const posted = await browser.go(`${app.url}/oauth/logout`, { client_id: web.id });
      expect(posted.status).toBe(200);
      expect(posted.body).toContain('Sign out from Portal?');
      const ask = await browser.go(`${app.url}/oauth/logout?client_id=${web.id}`);
      expect(ask.status).toBe(200);
      expect(ask.body).toContain('Sign out from Portal?');
      expect(ask.body).not.toContain('<script');
      const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(ask.body)?.[1] as string;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(ask.body)?.[1] as string;
      const done = await browser.go(action, { xsrf, logout: 'yes' });
      expect(done.status).toBe(200);
      expect(done.body).toContain('You are signed out');
      const silent = await browser.go((await codeRequest({ prompt: 'none' })).url);
      expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
    });

    it('RP-initiated logout sends people back to a registered post_logout_redirect_uri with its state, and refuses others', async () => {
      const BYE = 'https://rp.example.com/signed-out';
      const created = await call(app, 'POST', '/api/v1/applications', {
        token: ws.apiKey,
        body: { name: 'Logout RP', type: 'web', redirect_uris: [CALLBACK], post_logout_redirect_uris: [BYE] },
      });
      expect(created.status).toBe(201);
      expect(created.body.data.post_logout_redirect_uris).toEqual([BYE]);
      const client = { id: created.body.data.id as string, secret: created.body.data.client_secret as string };
      const config = await relyingParty(client.id, oidc.ClientSecretBasic(client.secret));
      const user = await newUser();
      const browser = new Browser(app.url);
      const { verifier, challenge } = await pkce();
      const state = oidc.randomState();
      const callback = await signInThrough(
        browser,
        authorizeUrl({
          client_id: client.id,
          response_type: 'code',
          redirect_uri: CALLBACK,
          scope: 'openid',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state,
        }),
        user.email,
      );
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
      const idTokenHint = tokens.id_token as string;

      for (const elsewhere of ['https://evil.example.com/signed-out', `${BYE}/`, CALLBACK]) {
        const refused = await browser.go(
          oidc.buildEndSessionUrl(config, { id_token_hint: idTokenHint, post_logout_redirect_uri: elsewhere }).href,
        );
        expect([refused.status, refused.location], elsewhere).toEqual([400, undefined]);
        expect(refused.body).toContain('post_logout_redirect_uri not registered');
      }

      const ask = await browser.go(
        oidc.buildEndSessionUrl(config, { id_token_hint: idTokenHint, post_logout_redirect_uri: BYE, state: 'bye-1' }).href,
      );
      expect(ask.status, ask.body).toBe(200);
      const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(ask.body)?.[1] as string;
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(ask.body)?.[1] as string;
      const done = await browser.go(action, { xsrf, logout: 'yes' });
      expect(done.location, done.body).toBe(`${BYE}?state=bye-1`);
      const silent = await browser.go((await codeRequest({ prompt: 'none' })).url);
      expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
    });

    it('a stale or foreign interaction page is an expired page, never a 500', async () => {
      const browser = new Browser(app.url);
      const page = await browser.go(`${app.url}/oauth/interaction/not-a-real-uid`);
      expect(page.status).toBe(400);
      expect(page.body).toContain('expired');
      const post = await browser.go(`${app.url}/oauth/interaction/not-a-real-uid/login`, { email: 'a@example.com', password: 'x' });
      expect(post.status).toBe(400);
    });
  });

  describe('tenancy and account state', () => {
    it('signs in only users of the application’s workspace; another workspace’s session must sign in again', async () => {
      const other = await createWorkspace(app, 'Other Co');
      const stranger = await newUser(other);
      const browser = new Browser(app.url);
      const login = await browser.go((await codeRequest()).url);
      const refused = await browser.go(formAction(login.body, 'Sign in'), { email: stranger.email, password: PASSWORD });
      expect(refused.status).toBe(401);
      expect(refused.body).toContain('The provided credentials are incorrect');

      // A browser signed in to the other workspace's application is asked to sign in here.
      const theirs = await call(app, 'POST', '/api/v1/applications', {
        token: other.apiKey,
        body: { name: 'Theirs', type: 'web', redirect_uris: [CALLBACK] },
      });
      const theirRequest = await codeRequest({ client_id: theirs.body.data.id });
      const signedIn = await signInThrough(browser, theirRequest.url, stranger.email);
      expect(signedIn.searchParams.get('code')).toBeTruthy();
      const silent = await browser.go((await codeRequest({ prompt: 'none' })).url);
      expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
      const again = await browser.go((await codeRequest()).url);
      expect(again.status).toBe(200);
      expect(again.body).toContain('autocomplete="current-password"');
    });

    it('answers the 11th hosted sign-in in a minute from one address 429, and audits the first refusal once', async () => {
      const user = await newUser();
      const browser = new Browser(app.url);
      const login = await browser.go((await codeRequest()).url);
      const action = formAction(login.body, 'Sign in');
      for (let i = 0; i < 10; i++) {
        expect((await browser.go(action, { email: user.email, password: 'not the passphrase' })).status).toBe(401);
      }
      for (let i = 0; i < 2; i++) {
        const limited = await browser.go(action, { email: user.email, password: PASSWORD });
        expect(limited.status).toBe(429);
        expect(limited.body).toContain('Too many sign-in attempts');
      }
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', {
        token: ws.apiKey,
      });
      const refused = audit.body.data.filter(
        (e: { ip: string; details: { reason?: string } }) => e.ip === browser.ip && e.details.reason === 'rate_limited',
      );
      expect(refused).toEqual([
        expect.objectContaining({ details: { reason: 'rate_limited', email: user.email, limit: 10, window_seconds: 60 } }),
      ]);
    });

    it('keeps a refused hosted sign-in on record although it runs in no transaction: its audit row is written', async () => {
      const user = await newUser();
      const browser = new Browser(app.url);
      const login = await browser.go((await codeRequest()).url);
      const refused = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: 'not the passphrase' });
      expect(refused.status).toBe(401);
      const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=auth.login&outcome=failure&target_id=${user.id}`, {
        token: ws.apiKey,
      });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0].details).toMatchObject({ reason: 'wrong_password', email: user.email });
    });

    it('a deactivated user’s refresh token and access token stop working', async () => {
      const user = await newUser();
      const request = await codeRequest();
      const callback = await signInThrough(new Browser(app.url), request.url, user.email);
      const config = await relyingParty();
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: request.verifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
      });
      expect((await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } })).status).toBe(
        200,
      );
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
      await expect(oidc.fetchUserInfo(config, tokens.access_token, user.id)).rejects.toMatchObject({ status: 401 });
    });

    it('introspection answers active: false for the tokens of a deactivated or deleted user, as userinfo and refresh refuse them', async () => {
      const config = await relyingParty();
      const changes = {
        deactivated: (id: string) => call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { status: 'deactivated' } }),
        deleted: (id: string) => call(app, 'DELETE', `/api/v1/users/${id}`, { token: ws.apiKey }),
      };
      for (const [label, change] of Object.entries(changes)) {
        const user = await newUser();
        const request = await codeRequest();
        const callback = await signInThrough(new Browser(app.url), request.url, user.email);
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: request.verifier,
          expectedState: request.state,
          expectedNonce: request.nonce,
        });
        expect((await oidc.tokenIntrospection(config, tokens.access_token)).active, label).toBe(true);
        expect((await change(user.id)).status, label).toBe(200);
        expect(await oidc.tokenIntrospection(config, tokens.access_token), label).toEqual({ active: false });
        expect(await oidc.tokenIntrospection(config, tokens.refresh_token as string), label).toEqual({ active: false });
      }
    });
  });
});
