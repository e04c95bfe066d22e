import { randomBytes } from 'node:crypto';
import type { Locator, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumAvailable, launchChromium, type Chromium } from '../helpers/chromium.ts';
import { signIn, someIp } from '../helpers/auth.ts';
import { call } from '../helpers/http.ts';
import { startTestIdp, type TestIdp } from '../helpers/test-idp.ts';
import { TotpDevice } from './totp-device.ts';

const RUN = randomBytes(3).toString('hex');
const DOMAIN = `acme-${RUN}.example`;
const emailOf = (name: string) => `${name}.${RUN}@${DOMAIN}`;
const NOT_THIS_TAB = 'This sign-in was not started from this browser tab';
/** BASE_URL's host: a name Chromium maps to 127.0.0.1 and, unlike localhost, counts as no secure origin (a LAN address over http). */
const HOST = 'dash.test';

/**
 * The dashboard's own social and SSO sign-in in Chromium, against a real OpenID provider: a sign-in
 * started from the dashboard's buttons finishes in the tab that started it, and a code that tab did
 * not ask for (an attacker's own sign-in, sent as a /login/callback link: login CSRF) is never
 * exchanged. The service's BASE_URL is plain http at a host other than localhost (`dash.test`), as a
 * self-hoster's LAN address is: no secure context, so no WebCrypto digest.
 */
describe.runIf(chromiumAvailable() || process.env.CI)('social and SSO sign-in from the dashboard, bound to its tab', () => {
  let app: TestApp;
  let idp: TestIdp;
  let chromium: Chromium;
  let workspaceId: string;
  let apiKey: string;
  /** BASE_URL: where the browser opens the dashboard. */
  let base: string;

  beforeAll(async () => {
    await ensureWebBuild();
    app = await startTestApp({ ALLOW_PRIVATE_IDP_TARGETS: 'true' }, { baseHost: HOST });
    base = app.deps.config.BASE_URL;
    idp = await startTestIdp([
      { client_id: 'identity-service', client_secret: 'idp-client-secret', redirect_uris: [`${base}/api/v1/auth/oauth/oidc/callback`] },
      { client_id: 'acme-app', client_secret: 'acme-idp-secret', redirect_uris: [`${base}/api/v1/auth/sso/oidc/callback`] },
    ]);
    const created = await call(app, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: 'Acme Corp', owner: { email: emailOf('olivia'), password: 'correct horse battery' } },
    });
    expect(created.status).toBe(201);
    workspaceId = created.body.data.workspace.id;
    apiKey = created.body.data.api_key;
    const provider = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: apiKey,
      body: { client_id: 'identity-service', client_secret: 'idp-client-secret', issuer: idp.issuer, display_name: 'Acme ID' },
    });
    expect(provider.status).toBe(201);

    // An organization whose IT admin connected the same provider through the Admin Portal.
    const org = await call(app, 'POST', '/api/v1/organizations', { token: apiKey, body: { name: 'Acme', domains: [DOMAIN] } });
    expect(org.status).toBe(201);
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', {
      token: apiKey,
      body: { organization_id: org.body.data.id },
    });
    const opened = await call(app, 'GET', new URL(link.body.data.link).pathname + new URL(link.body.data.link).search);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const saved = await call(app, 'POST', '/portal/sso/oidc', {
      raw: new URLSearchParams({ issuer: idp.issuer, client_id: 'acme-app', client_secret: 'acme-idp-secret' }).toString(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(saved.status).toBe(200);
    chromium = await launchChromium({ hostResolverRules: `MAP ${HOST} 127.0.0.1` });
  });
  afterAll(async () => {
    await chromium?.close();
    await idp?.close();
    await app?.close();
  });

  /**
   * A fresh tab (its own dashboard session) at the sign-in page, the IdP's session forgotten. Each tab
   * comes from its own client address (X-Forwarded-For, trusted from loopback), so the file's sign-ins
   * do not all spend one per-IP budget of 30 a minute (socialAuth: the providers, the starts, the exchanges).
   */
  async function signInPage(): Promise<Page> {
    await chromium.context.clearCookies();
    const page = await chromium.newPage();
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': someIp() });
    await page.goto(`${base}/login?workspace=${workspaceId}`);
    // Plain http at a host other than localhost: no secure context, so no crypto.subtle.
    expect(await page.evaluate(() => [window.isSecureContext, typeof crypto.subtle])).toEqual([false, 'undefined']);
    return page;
  }

  const signedIn = (page: Page) => page.evaluate(() => window.sessionStorage.getItem('identity.refresh_token') !== null);
  const pending = (page: Page) => page.evaluate(() => window.sessionStorage.getItem('identity.external_sign_in'));

  /** Where a sign-in lands: the dashboard, signed in as `email`. */
  async function expectSignedInAs(page: Page, email: string) {
    await page.waitForURL('**/dashboard/**');
    await page.getByRole('navigation', { name: 'Dashboard', exact: true }).waitFor();
    await page.locator('.account-email').filter({ hasText: email }).waitFor();
    expect(await pending(page)).toBeNull();
  }

  /** The attacker's side: a sign-in to their own account, started against the API; answers the code the app would receive. */
  async function attackersCode(start: string): Promise<string> {
    const started = await call(app, 'GET', start);
    expect(started.status).toBe(302);
    idp.signInAs({ sub: `mallory-${RUN}`, claims: { email: emailOf('mallory'), email_verified: true } });
    const callback = await idp.authorize(started.headers.get('location') as string);
    const back = await call(app, 'GET', `${callback.pathname}${callback.search}`);
    expect(back.status).toBe(303);
    const at = new URL(back.headers.get('location') as string);
    expect(at.pathname).toBe('/login/callback');
    return at.searchParams.get('code') as string;
  }

  const PASSPHRASE = 'a long passphrase';

  /** A user with a confirmed authenticator app: their sign-ins stop at the second step. */
  async function userWithAuthenticator(name: string): Promise<{ id: string; email: string; device: TotpDevice }> {
    const email = emailOf(name);
    const created = await call(app, 'POST', '/api/v1/users', { token: apiKey, body: { email, password: PASSPHRASE } });
    expect(created.status).toBe(201);
    const session = await signIn(app, workspaceId, email, PASSPHRASE);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const device = TotpDevice.fromUri(enrolled.body.data.otpauth_uri, app.clock);
    const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: device.nextCode() },
    });
    expect(confirmed.status).toBe(200);
    return { id: created.body.data.id, email, device };
  }

  /** Sends a code at the second step and waits for the service's answer. */
  async function sendCode(page: Page, code: string) {
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/trpc/mfa.verifyChallenge');
    await page.getByLabel('Authentication code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await answered;
  }

  it('signs in with a social provider from the dashboard’s button, the start bound with PKCE and a state', async () => {
    const page = await signInPage();
    const email = emailOf('ada');
    idp.signInAs({ sub: `ada-${RUN}`, claims: { email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace' } });
    const start = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/auth/oauth/oidc/start');
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    const params = new URL((await start).url()).searchParams;
    expect(params.get('workspace_id')).toBe(workspaceId);
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await expectSignedInAs(page, email);
    expect(new URL(page.url()).search).not.toContain('code=');
    await page.close();
  });

  it('signs in with the company’s SSO from the dashboard’s form, bound the same way', async () => {
    const page = await signInPage();
    const email = emailOf('jane');
    idp.signInAs({ sub: `jane-${RUN}`, claims: { email, email_verified: true } });
    const start = page.waitForRequest((request) => new URL(request.url()).pathname === '/api/v1/auth/sso/start');
    await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
    await page.getByLabel('Work email', { exact: true }).fill(email);
    await page.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
    const params = new URL((await start).url()).searchParams;
    expect(params.get('email')).toBe(email);
    expect(params.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get('code_challenge_method')).toBe('S256');
    await expectSignedInAs(page, email);
    await page.close();
  });

  it('asks an account with an authenticator app for its code before signing it in', async () => {
    const email = emailOf('grace');
    const created = await call(app, 'POST', '/api/v1/users', { token: apiKey, body: { email, password: 'a long passphrase' } });
    expect(created.status).toBe(201);
    const session = await signIn(app, workspaceId, email, 'a long passphrase');
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const device = TotpDevice.fromUri(enrolled.body.data.otpauth_uri, app.clock);
    const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: device.nextCode() },
    });
    expect(confirmed.status).toBe(200);

    const page = await signInPage();
    idp.signInAs({ sub: `grace-${RUN}`, claims: { email, email_verified: true } });
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true }).waitFor();
    expect(new URL(page.url()).search).toBe('');
    await page.getByLabel('Authentication code', { exact: true }).fill(device.nextCode());
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await expectSignedInAs(page, email);
    await page.close();
  });

  it('does not exchange a code the tab did not start a sign-in for: the attacker’s login CSRF link signs nobody in', async () => {
    // The attacker stops their own sign-in before the redirect and sends the victim the link.
    const code = await attackersCode(`/api/v1/auth/oauth/oidc/start?workspace_id=${workspaceId}`);
    const victim = await chromium.newPage();
    await victim.goto(`${base}/login/callback?code=${encodeURIComponent(code)}`);
    // Whichever comes first: the refusal, or (as before the binding) the attacker's dashboard.
    await victim
      .getByRole('alert')
      .or(victim.getByRole('navigation', { name: 'Dashboard', exact: true }))
      .waitFor();
    expect(await signedIn(victim)).toBe(false);
    expect(await victim.getByRole('alert').textContent()).toContain(NOT_THIS_TAB);
    await victim.getByRole('link', { name: 'Back to sign-in', exact: true }).waitFor();
    expect(new URL(victim.url()).search).toBe('');
    // The page never sent it: the code is still unspent (here the attacker swaps it, for their own account).
    const unspent = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code } });
    expect([unspent.status, unspent.body.data?.user?.email]).toEqual([200, emailOf('mallory')]);
    await victim.close();
  });

  it('does not exchange someone else’s code in a tab with a sign-in of its own in flight, and forgets that sign-in', async () => {
    const victim = await signInPage();
    // The victim's own sign-in never gets past its start (they never finish it).
    const isStart = (url: URL) => url.pathname === '/api/v1/auth/oauth/oidc/start';
    await victim.route(isStart, (route) => route.abort());
    const leaving = victim.waitForRequest((request) => isStart(new URL(request.url())));
    await victim.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await leaving;
    await victim.goto(`${base}/login?workspace=${workspaceId}`);
    expect(await pending(victim)).not.toBeNull();

    // The attacker's code, from an SSO sign-in bound with their own challenge and state.
    const challenge = randomBytes(32).toString('base64url').slice(0, 43);
    const code = await attackersCode(
      `/api/v1/auth/sso/start?workspace_id=${workspaceId}&email=${emailOf('mallory')}&code_challenge=${challenge}&state=theirs`,
    );
    await victim.goto(`${base}/login/callback?code=${encodeURIComponent(code)}&state=theirs`);
    await victim.getByRole('alert').filter({ hasText: NOT_THIS_TAB }).waitFor();
    expect(await signedIn(victim)).toBe(false);
    expect(await pending(victim)).toBeNull();
    // Not spent by the page: the wrong verifier is the attacker's only way to spend it.
    const spent = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code, code_verifier: 'x'.repeat(43) } });
    expect(spent.body.error.message).toContain('does not match');
    await victim.close();
  });

  it('brings a failed SSO start back to the sign-in form, its message beside the SSO form and the address still filled in, while an API client still gets the envelope', async () => {
    const page = await signInPage();
    // A domain no organization claims: the start fails before leaving for any provider.
    const stranger = `sam.${RUN}@unclaimed-${RUN}.example`;
    await page.getByLabel('Password', { exact: true }).fill('never kept anywhere');
    await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
    await page.getByLabel('Work email', { exact: true }).fill(stranger);
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v1/auth/sso/start');
    await page.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
    expect((await answered).status()).toBe(303);

    // Back on the form it left (through /login/callback), the message beside the SSO form that failed.
    const sso = page.getByRole('form', { name: 'Single sign-on', exact: true });
    await sso.getByRole('alert').filter({ hasText: 'No organization signs in with SSO for this email domain' }).waitFor();
    const at = new URL(page.url());
    expect([at.origin, at.pathname, at.search]).toEqual([base, '/login', `?workspace=${workspaceId}`]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect(await sso.getByLabel('Work email', { exact: true }).inputValue()).toBe(stranger);
    // The same address in the password form (the way in that is left), the password nowhere.
    expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(stranger);
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await page.getByLabel('Workspace ID', { exact: true }).inputValue()).toBe(workspaceId);
    expect(await pending(page)).toBeNull();

    // Corrected there, the SSO sign-in goes through.
    const email = emailOf('june');
    idp.signInAs({ sub: `june-${RUN}`, claims: { email, email_verified: true } });
    await sso.getByLabel('Work email', { exact: true }).fill(email);
    await sso.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
    await expectSignedInAs(page, email);

    // The same start asked by a program (fetch, curl, an SDK): the API's 404 in the envelope, unchanged.
    const api = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${workspaceId}&email=${encodeURIComponent(stranger)}`);
    expect([api.status, api.body.error.code]).toEqual([404, 'NOT_FOUND']);
    await page.close();
  });

  it('brings a refused social sign-in back to the form with the message as text, and leaves a refusal the tab did not start on the callback page', async () => {
    const page = await signInPage();
    const email = emailOf('eve');
    await page.getByLabel('Email', { exact: true }).fill(email);
    // The sign-in leaves (the provider is never reached) and its refusal comes back with the tab's state.
    const isStart = (url: URL) => url.pathname === '/api/v1/auth/oauth/oidc/start';
    await page.route(isStart, (route) => route.abort());
    const leaving = page.waitForRequest((request) => isStart(new URL(request.url())));
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    const state = new URL((await leaving).url()).searchParams.get('state') as string;
    const message = '<img src=x onerror="document.title=1">You <b>cancelled</b> the sign-in.';
    const refusal = `${base}/login/callback?error=access_denied&error_description=${encodeURIComponent(message)}&state=${encodeURIComponent(state)}`;
    await page.goto(refusal);

    const alert = page.getByRole('alert').filter({ hasText: 'the sign-in.' });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(message);
    expect(await alert.locator('img, b').count()).toBe(0);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(email);
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).waitFor();
    expect(await pending(page)).toBeNull();

    // The same link again: this tab's sign-in is used up, so it is no refusal of its own and stays where
    // it landed, without the link's text (anyone can send one, saying anything).
    await page.goto(refusal);
    await page.getByRole('heading', { level: 1, name: 'Sign-in not completed', exact: true }).waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(
      /^A sign-in came back refused, but it was not started from this browser tab/,
    );
    await page.getByRole('link', { name: 'Back to sign-in', exact: true }).waitFor();
    await page.close();
  });

  /** The tab's exchange of its code (the dashboard's tRPC call), for a test to make it fail. */
  const isExchange = (url: URL) => url.pathname === '/trpc/sso.exchange';

  it('brings a sign-in whose code the tab could not exchange (already used) back to the form, says to start again, and ends the tab’s sign-in', async () => {
    const page = await signInPage();
    const email = emailOf('ivy');
    await page.getByLabel('Email', { exact: true }).fill(email);
    idp.signInAs({ sub: `ivy-${RUN}`, claims: { email, email_verified: true } });
    // The code is spent before the tab's exchange reaches the service (a replayed link, a second tab): the exchange finds it used.
    const spentFirst: number[] = [];
    await page.route(isExchange, async (route) => {
      const sent = route.request().postDataJSON() as { code: string; code_verifier: string };
      spentFirst.push((await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: sent })).status);
      await route.continue();
    });
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();

    const alert = page.getByRole('alert').filter({ hasText: 'Start it again' });
    await alert.waitFor();
    expect(spentFirst).toEqual([200]);
    expect(await alert.textContent()).toBe('This sign-in had expired or was already used, so it was not completed. Start it again.');
    const at = new URL(page.url());
    expect([at.pathname, at.search]).toEqual(['/login', `?workspace=${workspaceId}`]);
    expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(email);
    expect(await pending(page)).toBeNull();
    expect(await signedIn(page)).toBe(false);
    // Once: the tab's sign-in is used up, nothing goes back to the callback or exchanges again.
    await page.waitForTimeout(500);
    expect([new URL(page.url()).pathname, spentFirst.length]).toEqual(['/login', 1]);

    // Started again from there, it goes through.
    await page.unroute(isExchange);
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await expectSignedInAs(page, email);
    await page.close();
  });

  it('says to try again when the exchange could not reach the service or the service failed, back beside the form that started', async () => {
    const email = emailOf('ken');
    const failures: [string, (route: Route) => Promise<void>, string][] = [
      [
        'social',
        (route) => route.abort('connectionreset'),
        'The sign-in could not be finished: the service could not be reached. Check your connection and try again.',
      ],
      [
        'sso',
        (route) =>
          route.fulfill({
            status: 500,
            contentType: 'application/json',
            body: JSON.stringify({
              error: {
                message: 'Internal server error',
                code: -32603,
                data: { appCode: 'INTERNAL', httpStatus: 500, path: 'sso.exchange' },
              },
            }),
          }),
        'The sign-in could not be finished because of a problem on our side. Try again in a moment.',
      ],
    ];
    for (const [via, fail, said] of failures) {
      const page = await signInPage();
      idp.signInAs({ sub: `ken-${RUN}`, claims: { email, email_verified: true } });
      await page.route(isExchange, fail);
      let form: Locator;
      if (via === 'sso') {
        await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
        form = page.getByRole('form', { name: 'Single sign-on', exact: true });
        await form.getByLabel('Work email', { exact: true }).fill(email);
        await form.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
      } else {
        form = page.locator('.external-sign-in');
        await page.getByLabel('Email', { exact: true }).fill(email);
        await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
      }
      const alert = form.getByRole('alert').filter({ hasText: 'again' });
      await alert.waitFor();
      expect(await alert.textContent()).toBe(said);
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(email);
      expect(await pending(page)).toBeNull();
      expect(await signedIn(page)).toBe(false);
      await page.close();
    }
  });

  it('shows a refusal’s message once: a reload, or coming back to the page after leaving it, shows the form without it', async () => {
    const page = await signInPage();
    const stranger = `rita.${RUN}@unclaimed-${RUN}.example`;
    const sso = page.getByRole('form', { name: 'Single sign-on', exact: true });
    const refused = async () => {
      if (!(await sso.isVisible())) await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
      await sso.getByLabel('Work email', { exact: true }).fill(stranger);
      await sso.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
      await sso.getByRole('alert').filter({ hasText: 'No organization signs in with SSO for this email domain' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/login');
    };
    /** The sign-in form as the refusal left it (the address filled in, the SSO form open), without its message. */
    const plainForm = async () => {
      await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
      await sso.getByLabel('Work email', { exact: true }).waitFor();
      expect(await sso.getByLabel('Work email', { exact: true }).inputValue()).toBe(stranger);
      expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(stranger);
      expect(await page.getByRole('alert').count()).toBe(0);
    };

    await refused();
    await page.reload();
    await plainForm();

    // Left for another page of the app and come back to with the browser's Back button.
    await refused();
    await page.getByRole('link', { name: 'Forgot your password?', exact: true }).click();
    await page.waitForURL('**/reset-password**');
    await page.goBack();
    await plainForm();

    // Left for another document and come back to.
    await refused();
    await page.goto(`${base}/login/callback`);
    await page.getByRole('heading', { level: 1, name: 'Sign-in not completed', exact: true }).waitFor();
    await page.goBack();
    await plainForm();
    expect(chromium.problems).toEqual([]);
    await page.close();
  });

  it('sends a sign-in page opened at another address than BASE_URL’s there before a social or SSO sign-in starts', async () => {
    await chromium.context.clearCookies();
    const page = await chromium.newPage();
    // 127.0.0.1 while BASE_URL names dash.test (as 127.0.0.1 while BASE_URL is http://localhost:3000).
    await page.goto(`${app.url}/login?workspace=${workspaceId}`);
    await page
      .getByRole('status')
      .filter({ hasText: `finishes at ${base}` })
      .waitFor();
    // Nothing that would start a sign-in this tab could never finish; the password form stays.
    expect(await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).count()).toBe(0);
    expect(await page.getByText('Sign in with your company’s single sign-on', { exact: true }).count()).toBe(0);
    await page.getByLabel('Password', { exact: true }).waitFor();

    await page.getByRole('link', { name: `Open the sign-in page at ${base}`, exact: true }).click();
    await page.waitForURL(`${base}/login?workspace=${workspaceId}`);
    const email = emailOf('linus');
    idp.signInAs({ sub: `linus-${RUN}`, claims: { email, email_verified: true } });
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await expectSignedInAs(page, email);
    await page.close();
  });

  it('signs in with the password form and the authenticator code over the same plain-http origin', async () => {
    const email = emailOf('hedy');
    const created = await call(app, 'POST', '/api/v1/users', { token: apiKey, body: { email, password: 'frequency hopping' } });
    expect(created.status).toBe(201);
    const session = await signIn(app, workspaceId, email, 'frequency hopping');
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const device = TotpDevice.fromUri(enrolled.body.data.otpauth_uri, app.clock);
    await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: device.nextCode() },
    });

    const page = await signInPage();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('frequency hopping');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByLabel('Authentication code', { exact: true }).fill(device.nextCode());
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL('**/dashboard/**');
    await page.locator('.account-email').filter({ hasText: email }).waitFor();
    await page.close();
  });

  it('says to copy an authenticator’s key by hand where the browser offers no clipboard (plain http)', async () => {
    const email = emailOf('barbara');
    const created = await call(app, 'POST', '/api/v1/users', { token: apiKey, body: { email, password: 'compiler pioneer' } });
    expect(created.status).toBe(201);
    const page = await signInPage();
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill('compiler pioneer');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL('**/dashboard/**');
    await page.goto(`${base}/dashboard/account`);
    await page.getByRole('button', { name: 'Add an authenticator app', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Add an authenticator app', exact: true });
    await dialog.getByLabel('Name', { exact: true }).fill('Phone');
    await dialog.getByRole('button', { name: 'Continue', exact: true }).click();
    await dialog.getByLabel('Setup key', { exact: true }).waitFor();
    expect(await page.evaluate(() => 'clipboard' in navigator)).toBe(false);
    await dialog.getByRole('button', { name: 'Copy key', exact: true }).click();
    await dialog.getByRole('status').filter({ hasText: 'Copy failed: select the text and copy it yourself' }).waitFor();
    await page.close();
  });

  /** How a second step ends alike on every form: its challenge's 5 minutes pass, or the account's codes run out. */
  const expires = {
    end: async () => app.clock.advance(5 * 60 * 1000 + 1000),
    said: 'Your sign-in expired before the code was entered. Sign in again.',
  };
  const codesRunOut = {
    // The account's five codes of five minutes, wrong ones (one was sent before the step ends).
    end: async (_user: { id: string }, page: Page) => {
      for (let i = 0; i < 4; i++) await sendCode(page, '000000');
    },
    said: 'Too many codes were tried for this account. Wait a few minutes, then sign in again.',
  };

  it('brings a social or SSO sign-in whose second step can no longer succeed (expired, too many codes, account deactivated) back to the form it started from; a wrong code stays to be tried again', async () => {
    const ends: {
      name: string;
      via: 'social' | 'sso';
      end: (user: { id: string }, page: Page) => Promise<void>;
      said: string;
    }[] = [
      { name: 'nora', via: 'social', ...expires },
      { name: 'otto', via: 'sso', ...codesRunOut },
      {
        name: 'pia',
        via: 'social',
        end: async (user) => {
          const gone = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: apiKey, body: { status: 'deactivated' } });
          expect(gone.status).toBe(200);
        },
        said: 'This account has been deactivated',
      },
    ];
    for (const { name, via, end, said } of ends) {
      const user = await userWithAuthenticator(name);
      const page = await signInPage();
      idp.signInAs({ sub: `${name}-${RUN}`, claims: { email: user.email, email_verified: true } });
      let form: Locator;
      if (via === 'sso') {
        await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
        form = page.getByRole('form', { name: 'Single sign-on', exact: true });
        await form.getByLabel('Work email', { exact: true }).fill(user.email);
        await form.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
      } else {
        form = page.locator('.external-sign-in');
        await page.getByLabel('Email', { exact: true }).fill(user.email);
        await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
      }
      await page.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true }).waitFor();
      // A wrong code can be tried again: the step stays, saying so.
      await sendCode(page, '000000');
      await page.getByRole('alert').filter({ hasText: 'The code is not correct' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/login/callback');
      await end(user, page);
      await sendCode(page, user.device.nextCode());

      const alert = form.getByRole('alert').filter({ hasText: said });
      await alert.waitFor();
      expect(await alert.textContent()).toBe(said);
      const at = new URL(page.url());
      expect([at.pathname, at.search], name).toEqual(['/login', `?workspace=${workspaceId}`]);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
      expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(user.email);
      expect(await pending(page)).toBeNull();
      expect(await signedIn(page)).toBe(false);
      // Once: a reload shows the form as it was left, without the message.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
      expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(user.email);
      expect(await page.getByRole('alert').count()).toBe(0);
      await page.close();
    }
  }, 60_000);

  it('goes back to the form the sign-in started from when the person chooses another account at the second step', async () => {
    const user = await userWithAuthenticator('quinn');
    const page = await signInPage();
    idp.signInAs({ sub: `quinn-${RUN}`, claims: { email: user.email, email_verified: true } });
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Use another account', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    const at = new URL(page.url());
    expect([at.pathname, at.search]).toEqual(['/login', `?workspace=${workspaceId}`]);
    expect(await page.getByLabel('Email', { exact: true }).inputValue()).toBe(user.email);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await signedIn(page)).toBe(false);
    await page.close();
  });

  it('ends the password form’s second step the same way: a challenge that can no longer succeed comes back beside the password form, the email filled in', async () => {
    const ends: { name: string; end: (user: { id: string }, page: Page) => Promise<void>; said: string }[] = [
      { name: 'rosa', ...expires },
      { name: 'saul', ...codesRunOut },
      {
        name: 'tess',
        end: async (user) => {
          const locked = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: apiKey, body: { status: 'locked' } });
          expect(locked.status).toBe(200);
        },
        said: 'This account is locked; ask an admin to unlock it',
      },
    ];
    for (const { name, end, said } of ends) {
      const user = await userWithAuthenticator(name);
      const page = await signInPage();
      await page.getByLabel('Email', { exact: true }).fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(PASSPHRASE);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true }).waitFor();
      await sendCode(page, '000000');
      await page.getByRole('alert').filter({ hasText: 'The code is not correct' }).waitFor();
      await end(user, page);
      await sendCode(page, user.device.nextCode());

      const form = page.getByRole('form', { name: 'Sign in', exact: true });
      const alert = form.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent(), name).toBe(said);
      expect(new URL(page.url()).pathname).toBe('/login');
      expect(await form.getByLabel('Email', { exact: true }).inputValue()).toBe(user.email);
      expect(await form.getByLabel('Password', { exact: true }).inputValue()).toBe('');
      expect(await signedIn(page)).toBe(false);
      await page.close();
    }
    expect(chromium.problems).toEqual([]);
  }, 60_000);

  /** The second step this tab keeps for a reload (sessionStorage), as the page wrote it. */
  const keptStep = async (page: Page) => {
    const kept = await page.evaluate(() => window.sessionStorage.getItem('identity.sign_in_challenge'));
    return kept === null ? null : (JSON.parse(kept) as { mfaToken: string });
  };
  /** Nothing of the kept step outside this tab's sessionStorage: not in localStorage, not in the address. */
  async function expectKeptInThisTabOnly(page: Page) {
    const kept = await keptStep(page);
    expect(kept?.mfaToken).toMatch(/\S{20,}/);
    const token = kept?.mfaToken as string;
    expect(await page.evaluate(() => JSON.stringify(window.localStorage))).not.toContain(token);
    expect(page.url()).not.toContain(token);
  }
  /**
   * The browser's clock moved past the challenge's 5 minutes (from the page's own time: the clock is the
   * whole context's, so an earlier test may have moved it already).
   */
  async function pastTheChallenge(page: Page) {
    const now = await page.evaluate(() => Date.now());
    await page.clock.setSystemTime(now + 5 * 60 * 1000 + 1000);
  }
  const codeStep = (page: Page) => page.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true });

  it('keeps a social sign-in’s second step through a reload and Back/Forward while its challenge lives, in this tab only, and forgets it once signed in', async () => {
    const user = await userWithAuthenticator('uma');
    const page = await signInPage();
    idp.signInAs({ sub: `uma-${RUN}`, claims: { email: user.email, email_verified: true } });
    await page.getByLabel('Email', { exact: true }).fill(user.email);
    await page.getByRole('button', { name: 'Continue with Acme ID', exact: true }).click();
    await codeStep(page).waitFor();

    await page.reload();
    await codeStep(page).waitFor();
    await expectKeptInThisTabOnly(page);
    expect(new URL(page.url()).pathname).toBe('/login/callback');
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    await page.goForward();
    await codeStep(page).waitFor();
    // The step still answers: a wrong code is refused as wrong (not as an unknown challenge), a good one signs in.
    await sendCode(page, '000000');
    await page.getByRole('alert').filter({ hasText: 'The code is not correct' }).waitFor();
    await sendCode(page, user.device.nextCode());
    await expectSignedInAs(page, user.email);
    expect(await keptStep(page)).toBeNull();
    // Another tab has its own sessionStorage: nothing of this step there.
    const other = await chromium.newPage();
    await other.goto(`${base}/login/callback`);
    await other.getByRole('alert').filter({ hasText: 'no sign-in came back to it' }).waitFor();
    await other.close();
    await page.close();
  }, 60_000);

  it('brings an SSO sign-in’s second step reloaded after its challenge expired back to the SSO form, saying so once', async () => {
    const user = await userWithAuthenticator('vera');
    const page = await signInPage();
    idp.signInAs({ sub: `vera-${RUN}`, claims: { email: user.email, email_verified: true } });
    await page.getByText('Sign in with your company’s single sign-on', { exact: true }).click();
    const form = page.getByRole('form', { name: 'Single sign-on', exact: true });
    await form.getByLabel('Work email', { exact: true }).fill(user.email);
    await form.getByRole('button', { name: 'Continue with SSO', exact: true }).click();
    await codeStep(page).waitFor();
    // Kept (when it arrived) before the clocks move on.
    await expect.poll(() => keptStep(page)).not.toBeNull();
    await app.clock.advance(5 * 60 * 1000 + 1000);
    await pastTheChallenge(page);

    await page.reload();
    const said = 'Your sign-in expired before the code was entered. Sign in again.';
    const alert = form.getByRole('alert').filter({ hasText: said });
    await alert.waitFor();
    expect(await alert.textContent()).toBe(said);
    const at = new URL(page.url());
    expect([at.pathname, at.search]).toEqual(['/login', `?workspace=${workspaceId}`]);
    expect(await form.getByLabel('Work email', { exact: true }).inputValue()).toBe(user.email);
    expect(await keptStep(page)).toBeNull();
    expect(await signedIn(page)).toBe(false);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('keeps the password form’s second step through a reload and Back/Forward, not for a /login opened afresh, and ends it with the expiry’s message once reloaded too late', async () => {
    const user = await userWithAuthenticator('wanda');
    const page = await signInPage();
    const passwordStep = async () => {
      await page.getByLabel('Email', { exact: true }).fill(user.email);
      await page.getByLabel('Password', { exact: true }).fill(PASSPHRASE);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await codeStep(page).waitFor();
    };
    await passwordStep();
    await page.reload();
    await codeStep(page).waitFor();
    await expectKeptInThisTabOnly(page);
    // A sign-in page opened afresh in this tab is a new sign-in; Back to the step's entry shows the step again.
    await page.goto(`${base}/login`);
    await page.getByRole('heading', { level: 1, name: 'Sign in', exact: true }).waitFor();
    await page.goBack();
    await codeStep(page).waitFor();
    await sendCode(page, user.device.nextCode());
    await page.waitForURL('**/dashboard/**');
    await page.locator('.account-email').filter({ hasText: user.email }).waitFor();
    expect(await keptStep(page)).toBeNull();
    await page.close();

    const late = await signInPage();
    await late.getByLabel('Email', { exact: true }).fill(user.email);
    await late.getByLabel('Password', { exact: true }).fill(PASSPHRASE);
    await late.getByRole('button', { name: 'Sign in', exact: true }).click();
    await codeStep(late).waitFor();
    await expect.poll(() => keptStep(late)).not.toBeNull();
    await app.clock.advance(5 * 60 * 1000 + 1000);
    await pastTheChallenge(late);
    await late.reload();
    const form = late.getByRole('form', { name: 'Sign in', exact: true });
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Your sign-in expired before the code was entered. Sign in again.');
    expect(await form.getByLabel('Email', { exact: true }).inputValue()).toBe(user.email);
    expect(await form.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await keptStep(late)).toBeNull();
    expect(await signedIn(late)).toBe(false);
    expect(chromium.problems).toEqual([]);
    await late.close();
  }, 60_000);

  it('shows no text a link brings with a refusal the tab did not start (another site’s words as ours), and says so when nothing came back', async () => {
    const page = await chromium.newPage();
    const phishing = 'Your account is suspended. Call +1 555 0100 to restore it.';
    await page.goto(`${base}/login/callback?error=access_denied&error_description=${encodeURIComponent(phishing)}&state=made-up`);
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: 'not started from this browser tab' }).waitFor();
    expect(await alert.textContent()).not.toContain(phishing);
    await page.goto(`${base}/login/callback?error=access_denied&error_description=${encodeURIComponent(phishing)}`);
    await alert.filter({ hasText: 'not started from this browser tab' }).waitFor();
    expect(await page.content()).not.toContain('Call +1 555 0100');
    await page.goto(`${base}/login/callback`);
    await page.getByRole('alert').filter({ hasText: 'no sign-in came back to it' }).waitFor();
    expect(chromium.problems).toEqual([]);
    await page.close();
  });
});
