import { randomUUID } from 'node:crypto';
import * as oidc from 'openid-client';
import type { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimits } from '../core/rate-limit.ts';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { signIn, someIp } from '../../test/helpers/auth.ts';
import { Browser, formAction, hiddenInput, type Page } from '../../test/helpers/browser.ts';
import { call } from '../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../test/helpers/workspace.ts';
import { authenticatorOf, codeAt } from '../../test/helpers/authenticator.ts';

const PASSWORD = 'hosted second step passphrase';
const CALLBACK = 'https://rp.example.com/auth/callback';

/**
 * The hosted sign-in's code step (`/oauth/interaction/{uid}/mfa`), driven as a browser does (cookies,
 * forms, redirects): a step that can no longer succeed goes back to the interaction's sign-in page,
 * and the application's authorization request still completes once the person signs in again.
 */
describe('the hosted sign-in’s second step', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let config: oidc.Configuration;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Acme');
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Acme Portal', type: 'web', redirect_uris: [CALLBACK] },
    });
    expect(created.status).toBe(201);
    const ip = someIp();
    config = await oidc.discovery(
      new URL(app.url),
      created.body.data.id,
      undefined,
      oidc.ClientSecretBasic(created.body.data.client_secret),
      {
        execute: [oidc.allowInsecureRequests],
        [oidc.customFetch]: (url, options) =>
          fetch(url, { ...options, body: options.body as RequestInit['body'], headers: { ...options.headers, 'x-forwarded-for': ip } }),
      },
    );
  });
  afterAll(() => app.close());

  /** The code of a fresh 30-second step (the app's clock moved to its start), so none is spent yet. */
  function nextCode(totp: TOTP): string {
    const now = app.clock.now().getTime();
    app.clock.set(new Date(now - (now % 30_000) + 30_000 + 5_000));
    return codeAt(totp, app.clock);
  }

  async function userWithAuthenticator(workspace: TestWorkspace = ws) {
    const email = uniqueEmail('second-step');
    const created = await call(app, 'POST', '/api/v1/users', { token: workspace.apiKey, body: { email, password: PASSWORD } });
    expect(created.status).toBe(201);
    const session = await signIn(app, workspace.id, email, PASSWORD);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: nextCode(totp) },
    });
    expect(verified.status).toBe(200);
    return { email, id: created.body.data.id as string, totp };
  }

  /** An authorization request of the application, its browser on the code step after the password. */
  async function atCodeStep(user: { email: string }) {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const browser = new Browser(app.url);
    const login = await browser.go(url.href);
    expect(login.status).toBe(200);
    const signInAction = formAction(login.body, 'Sign in');
    const step = await browser.go(signInAction, { email: user.email, password: PASSWORD });
    expect([step.status, step.location]).toEqual([200, undefined]);
    expect(step.body).toContain('autocomplete="one-time-code"');
    return { browser, step, signInAction, verifier, state };
  }

  /** Sends the code step's form as it is on `page` (its hidden inputs), with `code` typed in. */
  const sendCode = (browser: Browser, page: Page, code: string) => {
    const hidden = Object.fromEntries(
      [...page.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
    );
    return browser.go(formAction(page.body, 'Verify'), { ...hidden, code });
  };

  const alertOf = (page: Page) => /<p class="error" role="alert" id="form-error">([^<]*)<\/p>/.exec(page.body)?.[1];

  /** The application's callback got a code for the request, and it exchanges for the user's tokens, second factor included. */
  async function expectAuthorized(done: Page & { location?: string }, started: { verifier: string; state: string }, userId: string) {
    expect(done.location, done.body).toBeDefined();
    const callback = new URL(done.location as string);
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect(callback.searchParams.get('code')).toBeTruthy();
    const tokens = await oidc.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
    });
    expect(tokens.claims()).toMatchObject({ sub: userId, amr: ['pwd', 'otp', 'mfa'] });
  }

  /** The limiter counts real time, which the test cannot move: five minutes later, as a fresh count. */
  /** An admin sets the user's status (through the API, as the dashboard does). */
  async function setStatus(user: { id: string }, status: 'active' | 'locked' | 'deactivated') {
    const res = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status } });
    expect(res.status).toBe(200);
  }

  async function codeWindowPasses() {
    const spent = app.deps.rateLimits;
    app.deps.rateLimits = createRateLimits(app.deps.redis, `test:${randomUUID()}`, () => undefined);
    await spent.close();
  }

  /** Each way a step ends, and what ends it, then what lets the same person sign in again. */
  const ends: {
    name: string;
    end: (user: { id: string }, browser: Browser, step: Page) => Promise<void>;
    status: number;
    said: string;
    recover: (user: { id: string }) => Promise<void>;
  }[] = [
    {
      name: 'too many codes',
      // The account's five codes of five minutes: one wrong already, four more.
      end: async (_user, browser, step) => {
        for (let i = 0; i < 4; i++) expect((await sendCode(browser, step, '000000')).status).toBe(401);
      },
      status: 429,
      said: 'Too many codes were tried for this account. Wait a few minutes, then sign in again.',
      recover: codeWindowPasses,
    },
    {
      name: 'locked meanwhile',
      end: (user) => setStatus(user, 'locked'),
      status: 403,
      said: 'This account is locked; ask an admin to unlock it',
      recover: (user) => setStatus(user, 'active'),
    },
    {
      name: 'deactivated meanwhile',
      end: (user) => setStatus(user, 'deactivated'),
      status: 403,
      said: 'This account has been deactivated',
      recover: (user) => setStatus(user, 'active'),
    },
    {
      name: 'expired',
      end: async () => app.clock.advance(5 * 60 * 1000 + 1000),
      status: 401,
      said: 'Your sign-in expired before the code was entered. Sign in again.',
      recover: async () => undefined,
    },
  ];

  it.each(ends)(
    'ends a step that can no longer succeed ($name) on the same sign-in page, saying why with the address; signing in again there completes the authorization',
    async ({ name, end, status, said, recover }) => {
      const user = await userWithAuthenticator();
      const started = await atCodeStep(user);
      const { browser, step } = started;
      // A wrong code can be tried again: the step stays, saying so.
      const wrong = await sendCode(browser, step, '000000');
      expect([wrong.status, alertOf(wrong)], name).toEqual([401, 'The code is not correct, or was already used']);
      expect(wrong.body).toContain('autocomplete="one-time-code"');

      await end(user, browser, step);
      const ended = await sendCode(browser, wrong, nextCode(user.totp));
      expect([ended.status, ended.location, alertOf(ended)], name).toEqual([status, undefined, said]);
      // The interaction's own sign-in page, the address filled in, no challenge left on it.
      expect(formAction(ended.body, 'Sign in'), name).toBe(started.signInAction);
      expect(ended.body).toContain(`value="${user.email}"`);
      expect(ended.body).toContain('autocomplete="current-password"');
      expect(ended.body).not.toContain('mfa_token');

      // Its form is still the interaction's: another browser (no interaction cookie) gets nowhere with it.
      const foreign = await new Browser(app.url).go(formAction(ended.body, 'Sign in'), { email: user.email, password: PASSWORD });
      expect([foreign.status, foreign.location], name).toEqual([400, undefined]);
      expect(foreign.body).toContain('This sign-in page has expired');

      await recover(user);
      const again = await browser.go(formAction(ended.body, 'Sign in'), { email: user.email, password: PASSWORD });
      expect([again.status, alertOf(again)], name).toEqual([200, undefined]);
      await expectAuthorized(await sendCode(browser, again, nextCode(user.totp)), started, user.id);
    },
  );

  it('keeps a wrong or malformed code on the code step, to be tried again', async () => {
    const user = await userWithAuthenticator();
    const started = await atCodeStep(user);
    const { browser } = started;
    let page: Page = started.step;
    for (const [code, status, said] of [
      ['000000', 401, 'The code is not correct, or was already used'],
      ['abcdef', 400, 'Enter the six-digit code from your authenticator app.'],
      ['1'.repeat(65), 400, 'Enter the six-digit code from your authenticator app.'],
    ] as const) {
      page = await sendCode(browser, page, code);
      expect([page.status, alertOf(page)], code).toEqual([status, said]);
      expect(page.body).toContain('autocomplete="one-time-code"');
    }
    // The address typed with the password rides along, should the step end.
    expect(hiddenInput(page.body, 'email')).toBe(user.email);
    await expectAuthorized(await sendCode(browser, page, nextCode(user.totp)), started, user.id);
  });

  it('leaves the application its answer from the page a step ended on: Cancel sends access_denied to its callback', async () => {
    const user = await userWithAuthenticator();
    const started = await atCodeStep(user);
    await setStatus(user, 'deactivated');
    const ended = await sendCode(started.browser, started.step, nextCode(user.totp));
    expect(alertOf(ended)).toBe('This account has been deactivated');
    const cancelled = await started.browser.go(formAction(ended.body, 'Cancel'), {});
    const callback = new URL(cancelled.location as string);
    expect(callback.origin + callback.pathname).toBe(CALLBACK);
    expect([callback.searchParams.get('error'), callback.searchParams.get('state')]).toEqual(['access_denied', started.state]);
  });

  it("spends nothing of another workspace's user when its challenge is sent to this application's code step", async () => {
    const other = await createWorkspace(app, 'Other');
    const stranger = await userWithAuthenticator(other);
    const login = await call(app, 'POST', '/api/v1/auth/login', {
      headers: { 'x-tenant-id': other.id },
      body: { email: stranger.email, password: PASSWORD },
    });
    expect(login.status).toBe(200);
    const theirs = login.body.data.mfa_token as string;
    const user = await userWithAuthenticator();
    const { browser, step } = await atCodeStep(user);
    const withTheirs = { ...step, body: step.body.replace(/(name="mfa_token" value=")[^"]*/, `$1${theirs}`) };
    for (let i = 0; i < 6; i += 1) {
      const page = await sendCode(browser, withTheirs, '000000');
      expect(page.body, `attempt ${i + 1}`).not.toContain('autocomplete="one-time-code"');
    }
    const verified = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
      headers: { 'x-tenant-id': other.id },
      body: { mfa_token: theirs, code: nextCode(stranger.totp) },
    });
    expect(verified.status).toBe(200);
  });
});
