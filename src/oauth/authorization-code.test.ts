import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { signIn, someIp } from '../../test/helpers/auth.ts';
import { Browser, formAction, hiddenInput } from '../../test/helpers/browser.ts';
import { basicAuth, call } from '../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../test/helpers/workspace.ts';
import { toldEvents } from '../../test/helpers/events.ts';
import { authenticatorOf, codeAt } from '../../test/helpers/authenticator.ts';

const PASSWORD = 'relying party passphrase';
const SPA_CALLBACK = 'http://localhost:5173/callback';
const WEB_CALLBACK = 'https://rp.example.com/auth/callback';

/**
 * The authorization code flow with PKCE, driven the way a real relying party does it: openid-client
 * discovers the server, builds the authorization URL and exchanges the code; a browser (cookies, form
 * posts, redirects) signs in on the hosted page in between.
 */
describe('authorization code + PKCE with openid-client', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let spaId: string;
  let web: { id: string; secret: string };

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Acme');
    const spa = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Acme SPA', type: 'spa', redirect_uris: [SPA_CALLBACK] },
    });
    spaId = spa.body.data.id;
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Acme Portal', type: 'web', redirect_uris: [WEB_CALLBACK] },
    });
    web = { id: created.body.data.id, secret: created.body.data.client_secret };
  });
  afterAll(() => app.close());

  /** openid-client over plain http, each relying party from its own address (per-IP limits). */
  async function relyingParty(clientId: string, auth: oidc.ClientAuth = oidc.None()): Promise<oidc.Configuration> {
    const ip = someIp();
    const config = await oidc.discovery(new URL(app.url), clientId, undefined, auth, {
      // Also check every id_token's signature against the JWKS (the library may skip it over TLS).
      execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
      [oidc.customFetch]: (url, options) =>
        fetch(url, { ...options, body: options.body as RequestInit['body'], headers: { ...options.headers, 'x-forwarded-for': ip } }),
    });
    return config;
  }

  async function newUser() {
    const email = uniqueEmail('rp');
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email, password: PASSWORD, name: 'Ada Lovelace' },
    });
    expect(created.status).toBe(201);
    return { email, id: created.body.data.id as string };
  }

  interface Started {
    url: URL;
    verifier: string;
    state: string;
    nonce: string;
  }

  async function start(config: oidc.Configuration, redirectUri: string, extra: Record<string, string> = {}): Promise<Started> {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile offline_access',
      // OpenID Connect honours offline_access (a refresh token) only with prompt=consent.
      prompt: 'consent',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    });
    return { url, verifier, state, nonce };
  }

  it('signs a user in end to end: discovery, hosted sign-in, code, id_token, userinfo, refresh, revoke, introspect', async () => {
    const user = await newUser();
    const config = await relyingParty(spaId);
    expect(config.serverMetadata().issuer).toBe(app.url);
    const started = await start(config, SPA_CALLBACK);

    const browser = new Browser(app.url);
    const login = await browser.go(started.url.href);
    expect(login.status).toBe(200);
    expect(login.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(login.body).toContain('Sign in to Acme SPA');
    expect(login.body).toContain('Acme');
    expect(login.body).toContain('autocomplete="current-password"');
    expect(login.body).not.toContain('<script');

    const wrong = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('The provided credentials are incorrect');

    const done = await browser.go(formAction(wrong.body, 'Sign in'), { email: user.email, password: PASSWORD });
    expect(done.location, done.body).toBeDefined();
    const callback = new URL(done.location as string);
    expect(callback.origin + callback.pathname).toBe(SPA_CALLBACK);
    expect(callback.searchParams.get('state')).toBe(started.state);
    expect(callback.searchParams.get('iss')).toBe(app.url);

    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeTruthy();
    const claims = tokens.claims();
    expect(claims).toMatchObject({ iss: app.url, sub: user.id, aud: spaId, nonce: started.nonce });
    expect(typeof claims?.auth_time).toBe('number');
    const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri as string));
    const verified = await jwtVerify(tokens.id_token as string, jwks, { issuer: app.url, audience: spaId, algorithms: ['RS256'] });
    expect(verified.protectedHeader).toMatchObject({ alg: 'RS256', kid: expect.any(String) });
    expect(verified.payload.sub).toBe(user.id);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: user.email, email_verified: false, name: 'Ada Lovelace' });

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).toBeTruthy();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()?.sub).toBe(user.id);

    const active = await oidc.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, sub: user.id, client_id: spaId });
    await oidc.tokenRevocation(config, refreshed.access_token);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);

    // The rotated refresh token was spent: presenting it again is a replay, and ends the whole grant.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  /**
   * Tokens from the whole flow (hosted sign-in, code, exchange) for `user`, and the relying party that
   * holds them; `extra` authorization parameters replace the defaults of `start` (a refresh token
   * only while the scope keeps offline_access).
   */
  async function oauthTokens(user: { email: string }, extra: Record<string, string> = {}) {
    const config = await relyingParty(web.id, oidc.ClientSecretBasic(web.secret));
    const started = await start(config, WEB_CALLBACK, extra);
    const browser = new Browser(app.url);
    const login = await browser.go(started.url.href);
    const done = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: PASSWORD });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    if (!extra.scope || extra.scope.includes('offline_access')) expect(tokens.refresh_token).toBeTruthy();
    return { config, tokens, browser };
  }

  /** Where a silent authorization request (`prompt=none`) of the relying party's browser ends: a code, or an error. */
  async function silentAuthorization({ config, browser }: Awaited<ReturnType<typeof oauthTokens>>) {
    const silent = await browser.go((await start(config, WEB_CALLBACK, { prompt: 'none', scope: 'openid' })).url.href);
    const callback = new URL(silent.location as string);
    return callback.searchParams.get('error') ?? (callback.searchParams.get('code') ? 'code' : 'nothing');
  }

  /** The grant is over: no refresh, no userinfo, and introspection says inactive. */
  async function expectEnded({ config, tokens }: Awaited<ReturnType<typeof oauthTokens>>, userId: string) {
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.fetchUserInfo(config, tokens.access_token, userId)).rejects.toMatchObject({ status: 401 });
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  }

  // Before any test moves the clock: the fresh key it makes must not lie in the future of other files' apps.
  it('stops signing and honouring id_tokens of a revoked id_token key at once; another key signs the next; no restart', async () => {
    const user = await newUser();
    const before = await oauthTokens(user);
    const revokedKid = decodeProtectedHeader(before.tokens.id_token as string).kid as string;
    const { signingKid } = await app.deps.keys.revoke(revokedKid);
    expect(signingKid).not.toBe(revokedKid);
    const published = (await call(app, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(published).not.toContain(revokedKid);
    expect(published).toContain(signingKid);

    // openid-client checks every id_token's signature against the JWKS (enableNonRepudiationChecks). A
    // relying party holding the JWKS from before refuses the fresh key until it fetches it again (the
    // trade-off of signing at once); one that fetches it now accepts it.
    const fresh = await relyingParty(web.id, oidc.ClientSecretBasic(web.secret));
    const refreshed = await oidc.refreshTokenGrant(fresh, before.tokens.refresh_token as string);
    expect(decodeProtectedHeader(refreshed.id_token as string).kid).toBe(signingKid);
    // OAuth access tokens are opaque, not signed with these keys: userinfo still answers.
    expect(await oidc.fetchUserInfo(fresh, refreshed.access_token, user.id)).toMatchObject({ sub: user.id });

    // An id_token from the revoked key is no longer a valid id_token_hint.
    const signOut = await before.browser.go(
      oidc.buildEndSessionUrl(before.config, { id_token_hint: before.tokens.id_token as string }).href,
    );
    expect(signOut.status).toBe(400);
    expect(signOut.body).not.toContain('op.logoutForm');
  });

  it('signs id_tokens with an id_token key rotated while it runs, once it has been published 5 minutes; no restart', async () => {
    const user = await newUser();
    const before = await oauthTokens(user);
    const oldKid = decodeProtectedHeader(before.tokens.id_token as string).kid;
    const newKid = await app.deps.keys.rotate('RS256');
    expect(newKid).not.toBe(oldKid);
    const published = (await call(app, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
    expect(published).toEqual(expect.arrayContaining([oldKid, newKid]));

    // Relying parties may hold a JWKS from before the rotation: the retired key signs a while longer.
    const soon = await oauthTokens(user);
    expect(decodeProtectedHeader(soon.tokens.id_token as string).kid).not.toBe(newKid);

    app.clock.advance(5 * 60 * 1000);
    // openid-client checks every id_token's signature against the JWKS (enableNonRepudiationChecks).
    const after = await oauthTokens(user);
    expect(decodeProtectedHeader(after.tokens.id_token as string).kid).toBe(newKid);
    const refreshed = await oidc.refreshTokenGrant(after.config, before.tokens.refresh_token as string);
    expect(decodeProtectedHeader(refreshed.id_token as string).kid).toBe(newKid);

    // An id_token from the retired key is still a valid id_token_hint.
    const signOut = await before.browser.go(
      oidc.buildEndSessionUrl(before.config, { id_token_hint: before.tokens.id_token as string }).href,
    );
    expect(signOut.status, signOut.body).toBe(200);
    expect(signOut.body).toContain('op.logoutForm');
  });

  it('the id_token carries the claims of the scopes granted, as userinfo does (Auth0, Logto); a narrowed refresh drops the rest', async () => {
    const user = await newUser();
    const { config, tokens } = await oauthTokens(user);
    expect(tokens.claims()).toMatchObject({ sub: user.id, email: user.email, email_verified: false, name: 'Ada Lovelace' });
    expect(typeof tokens.claims()?.updated_at).toBe('number');

    const narrowed = await oidc.refreshTokenGrant(config, tokens.refresh_token as string, { scope: 'openid email' });
    expect(narrowed.scope).toBe('openid email');
    const claims = narrowed.claims();
    expect(claims).toMatchObject({ sub: user.id, email: user.email, email_verified: false });
    expect(claims).not.toHaveProperty('name');

    const { tokens: openidOnly } = await oauthTokens(user, { scope: 'openid', prompt: 'login' });
    expect(openidOnly.claims()).toMatchObject({ sub: user.id });
    expect(openidOnly.claims()).not.toHaveProperty('email');
    expect(openidOnly.claims()).not.toHaveProperty('name');
  });

  it('scope errors are exactly {error, error_description}: a refresh asking for more, userinfo without openid', async () => {
    const user = await newUser();
    const { tokens } = await oauthTokens(user, { scope: 'openid email offline_access' });
    const refresh = (body: Record<string, string>) =>
      fetch(`${app.url}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(web.id, web.secret),
          'x-forwarded-for': someIp(),
        },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string, ...body }).toString(),
      });

    // oidc-provider added a `scope` member naming what was missing; CONTRACT: errors are {error, error_description}.
    const wider = await refresh({ scope: 'openid email profile' });
    expect(wider.status).toBe(400);
    expect(await wider.json()).toEqual({ error: 'invalid_scope', error_description: expect.any(String) });

    const emailOnly = await refresh({ scope: 'email' });
    expect(emailOnly.status).toBe(200);
    const { access_token: withoutOpenid } = await emailOnly.json();
    const info = await fetch(`${app.url}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${withoutOpenid}`, 'x-forwarded-for': someIp() },
    });
    expect(info.status).toBe(403);
    expect(info.headers.get('www-authenticate')).toContain('insufficient_scope');
    expect(await info.json()).toEqual({ error: 'insufficient_scope', error_description: expect.any(String) });
  });

  it('userinfo asked with another scheme than Bearer is 401 with a bare Bearer challenge (RFC 6750 §3.1), as with no token', async () => {
    const user = await newUser();
    const { tokens } = await oauthTokens(user, { scope: 'openid' });
    const userinfo = (headers: Record<string, string>, body?: string) =>
      fetch(`${app.url}/oauth/userinfo`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          'x-forwarded-for': someIp(),
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          ...headers,
        },
        body,
      });
    const challenge = `Bearer realm="${app.url}"`;

    const none = await userinfo({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(challenge);

    for (const authorization of [basicAuth(web.id, web.secret), 'Digest username="ada"', `DPoP ${tokens.access_token}`, 'Basic']) {
      const res = await userinfo({ authorization });
      expect(res.status, authorization).toBe(401);
      expect(res.headers.get('www-authenticate'), authorization).toBe(challenge);
      expect(await res.json(), authorization).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    }

    // Still malformed requests (RFC 6750 §3.1 invalid_request): Bearer with no token, a token sent two ways.
    const bare = await userinfo({ authorization: 'Bearer' });
    expect(bare.status).toBe(400);
    expect((await bare.json()).error).toBe('invalid_request');
    const twice = await userinfo({ authorization: basicAuth(web.id, web.secret) }, `access_token=${tokens.access_token}`);
    expect(twice.status).toBe(400);
    expect((await twice.json()).error).toBe('invalid_request');

    const bearer = await userinfo({ authorization: `bearer ${tokens.access_token}` });
    expect(bearer.status).toBe(200);
    expect(await bearer.json()).toEqual({ sub: user.id });
    // RFC 6750 §2.1: `"Bearer" 1*SP b64token`, more than one space included.
    const spaced = await userinfo({ authorization: `Bearer   ${tokens.access_token}` });
    expect(spaced.status).toBe(200);
  });

  it("ending a user's sessions ends their OAuth grants: password change, revoke-all, deactivation, deletion", async () => {
    const user = await newUser();
    const api = await signIn(app, ws.id, user.email, PASSWORD);
    const beforeChange = await oauthTokens(user);
    const changed = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: api.accessToken,
      body: { current_password: PASSWORD, new_password: 'another relying party passphrase' },
    });
    expect(changed.status).toBe(200);
    await expectEnded(beforeChange, user.id);
    // The API session that changed the password stays.
    expect((await call(app, 'GET', '/api/v1/mfa/factors', { token: api.accessToken })).status).toBe(200);
    await call(app, 'POST', '/api/v1/auth/password/change', {
      token: api.accessToken,
      body: { current_password: 'another relying party passphrase', new_password: PASSWORD },
    });

    const beforeRevokeAll = await oauthTokens(user);
    expect((await call(app, 'POST', '/api/v1/auth/sessions/revoke-all', { token: api.accessToken })).status).toBe(200);
    await expectEnded(beforeRevokeAll, user.id);

    // Another user's grant is not touched by any of it.
    const other = await newUser();
    const untouched = await oauthTokens(other);

    const beforeDeactivation = await oauthTokens(user);
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    await expectEnded(beforeDeactivation, user.id);

    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'active' } });
    const beforeDeletion = await oauthTokens(user);
    expect((await call(app, 'DELETE', `/api/v1/users/${user.id}`, { token: ws.apiKey })).status).toBe(200);
    await expectEnded(beforeDeletion, user.id);

    expect((await oidc.tokenIntrospection(untouched.config, untouched.tokens.access_token)).active).toBe(true);
    expect((await oidc.refreshTokenGrant(untouched.config, untouched.tokens.refresh_token as string)).access_token).toBeTruthy();
  });

  it("an admin's lock ends the user's sessions and OAuth grants at once, and unlocking brings none back", async () => {
    const user = await newUser();
    const bystander = await newUser();
    const api = await signIn(app, ws.id, user.email, PASSWORD);
    const bystanderApi = await signIn(app, ws.id, bystander.email, PASSWORD);
    const held = await oauthTokens(user);
    const untouched = await oauthTokens(bystander);
    expect(await silentAuthorization(held)).toBe('code');

    const locked = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    expect([locked.status, locked.body.data.status]).toEqual([200, 'locked']);
    const me = await call(app, 'GET', '/api/v1/auth/me', { token: api.accessToken });
    expect([me.status, me.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const refreshed = await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: api.refreshToken } });
    expect([refreshed.status, refreshed.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    await expectEnded(held, user.id);
    // The hosted sign-in session is over too: no silent code for a locked account.
    expect(await silentAuthorization(held)).toBe('login_required');

    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect((await call(app, 'GET', '/api/v1/auth/me', { token: api.accessToken })).status).toBe(401);
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: api.refreshToken } })).status).toBe(401);
    await expectEnded(held, user.id);

    expect((await call(app, 'GET', '/api/v1/auth/me', { token: bystanderApi.accessToken })).status).toBe(200);
    expect((await oidc.tokenIntrospection(untouched.config, untouched.tokens.access_token)).active).toBe(true);
    expect(await silentAuthorization(untouched)).toBe('code');
  });

  it("an application's session (its grant) that ends sends session.revoked with its client_id, whatever ends it", async () => {
    const user = await newUser();
    const told = (reason: string) => ({ session_id: null, user_id: user.id, client_id: web.id, reason });

    // The application revokes its refresh token (RFC 7009): the grant ends.
    const revoked = await oauthTokens(user);
    await oidc.tokenRevocation(revoked.config, revoked.tokens.refresh_token as string);
    await expectEnded(revoked, user.id);
    expect(await toldEvents(app, ws.id, 'session.revoked', user.id)).toEqual([told('revoked')]);

    // A replayed refresh token ends the grant.
    const replayed = await oauthTokens(user);
    await oidc.refreshTokenGrant(replayed.config, replayed.tokens.refresh_token as string);
    await expect(oidc.refreshTokenGrant(replayed.config, replayed.tokens.refresh_token as string)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect(await toldEvents(app, ws.id, 'session.revoked', user.id)).toEqual([told('revoked'), told('refresh_token_reuse')]);

    // RP-initiated logout ends the grants that do not outlive the browser session (no offline_access).
    const online = await oauthTokens(user, { scope: 'openid email' });
    const ask = await online.browser.go(`${app.url}/oauth/logout?client_id=${web.id}`);
    const action = /<form id="op.logoutForm" method="post" action="([^"]+)"/.exec(ask.body)?.[1] as string;
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(ask.body)?.[1] as string;
    expect((await online.browser.go(action, { xsrf, logout: 'yes' })).body).toContain('You are signed out');
    await expect(oidc.fetchUserInfo(online.config, online.tokens.access_token, user.id)).rejects.toMatchObject({ status: 401 });
    expect(await toldEvents(app, ws.id, 'session.revoked', user.id)).toEqual([
      told('revoked'),
      told('refresh_token_reuse'),
      told('logout'),
    ]);

    // The API's ways end the application's session too, with the API session, each told once.
    const api = await signIn(app, ws.id, user.email, PASSWORD);
    const held = await oauthTokens(user);
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    await expectEnded(held, user.id);
    // (The API's events carry the app's clock, the authorization server's the real one: compared as a set.)
    const ends = await toldEvents(app, ws.id, 'session.revoked', user.id);
    expect(ends).toEqual(
      expect.arrayContaining([
        told('revoked'),
        told('refresh_token_reuse'),
        told('logout'),
        told('user_deactivated'),
        { session_id: api.sessionId, user_id: user.id, client_id: null, reason: 'user_deactivated' },
      ]),
    );
    expect(ends).toHaveLength(5);
  });

  it("a grant that outlived an admin's lock (racing it) is refused: no refresh, no userinfo, inactive, no silent sign-in", async () => {
    const user = await newUser();
    const held = await oauthTokens(user);
    // The lock as committed by a request that raced this grant's issuance: the row says locked,
    // the grant is still there.
    await app.deps.orm.em.fork().getConnection().execute(`update users set status = 'locked', locked_until = null where id = ?`, [user.id]);
    await expectEnded(held, user.id);
    expect(await silentAuthorization(held)).toBe('login_required');
  });

  it('discovery lists the claims the tokens carry: no sid, which no id_token holds', async () => {
    const user = await newUser();
    const { config, tokens } = await oauthTokens(user);
    const supported = config.serverMetadata().claims_supported ?? [];
    expect(supported).not.toContain('sid');
    const claims = tokens.claims() ?? {};
    expect(claims).not.toHaveProperty('sid');
    // Every claim of the id_token is listed, but those of the JWT and the request itself.
    const protocol = new Set(['aud', 'exp', 'iat', 'nonce', 'at_hash', 'c_hash', 'azp']);
    expect(Object.keys(claims).filter((claim) => !protocol.has(claim) && !supported.includes(claim))).toEqual([]);
  });

  it('the hosted sign-in follows the API’s rules: audit rows, deactivated accounts refused after the password', async () => {
    const user = await newUser();
    const config = await relyingParty(spaId);
    const browser = new Browser(app.url);
    const login = await browser.go((await start(config, SPA_CALLBACK)).url.href);
    await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: 'wrong password here' });
    const done = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: PASSWORD });
    expect(done.location).toBeDefined();
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ outcome: string; details: Record<string, unknown> }[]>(
        "select outcome, details from audit_events where workspace_id = ? and event_type = 'auth.login' and target_id = ? order by created_at",
        [ws.id, user.id],
      );
    expect(rows.map((r) => r.outcome)).toEqual(['failure', 'success']);
    expect(rows[1]?.details).toMatchObject({ method: 'password', client_id: spaId });
    const sessions = await app.deps.orm.em.fork().getConnection().execute('select id from sessions where user_id = ?', [user.id]);
    expect(sessions).toHaveLength(0);

    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    const again = new Browser(app.url);
    const page = await again.go((await start(config, SPA_CALLBACK)).url.href);
    const refused = await again.go(formAction(page.body, 'Sign in'), { email: user.email, password: PASSWORD });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('deactivated');
    expect(refused.location).toBeUndefined();
  });

  it('asks for the TOTP code when the user has a verified factor, with a confidential client', async () => {
    const user = await newUser();
    const session = await signIn(app, ws.id, user.email, PASSWORD);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const step = (offset: number) => {
      const now = app.clock.now().getTime();
      app.clock.set(new Date(now - (now % 30_000) + offset * 30_000 + 5_000));
      return codeAt(totp, app.clock);
    };
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: step(1) },
    });
    expect(verified.status).toBe(200);

    const config = await relyingParty(web.id, oidc.ClientSecretBasic(web.secret));
    const started = await start(config, WEB_CALLBACK);
    const browser = new Browser(app.url);
    const login = await browser.go(started.url.href);
    const challenge = await browser.go(formAction(login.body, 'Sign in'), { email: user.email, password: PASSWORD });
    expect(challenge.status).toBe(200);
    expect(challenge.location).toBeUndefined();
    expect(challenge.body).toContain('autocomplete="one-time-code"');
    const mfaToken = hiddenInput(challenge.body, 'mfa_token');

    const wrong = await browser.go(formAction(challenge.body, 'Verify'), { mfa_token: mfaToken, code: '000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('role="alert"');

    const done = await browser.go(formAction(wrong.body, 'Verify'), { mfa_token: mfaToken, code: step(2) });
    expect(done.location, done.body).toBeDefined();
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location as string), {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
    });
    expect(tokens.claims()).toMatchObject({ sub: user.id, aud: web.id, amr: ['pwd', 'otp', 'mfa'] });
    expect((await oidc.fetchUserInfo(config, tokens.access_token, user.id)).email).toBe(user.email);
  });
});
