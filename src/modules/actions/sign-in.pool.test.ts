import { decodeJwt } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { randomBytes, createHash } from 'node:crypto';
import { login, signIn, someIp } from '../../../test/helpers/auth.ts';
import { authenticatorOf, codeAt } from '../../../test/helpers/authenticator.ts';
import { Browser, formAction, hiddenInput } from '../../../test/helpers/browser.ts';
import { call, type ApiResponse, type CallOptions } from '../../../test/helpers/http.ts';
import { linkTokenIn, MailSink } from '../../../test/helpers/mail-sink.ts';
import { startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { AppError } from '../../core/errors.ts';
import type { ActionOutcome } from './isolate-runner.ts';
import { gate } from '../../../test/helpers/gate.ts';

const SPA_CALLBACK = 'http://localhost:5173/callback';
const PASSWORD = 'slow rules passphrase';

/** Decides by the address's first word: deny, require a second factor, throw, or add a claim. */
const GATE = `exports.onExecutePostLogin = async (event, api) => {
  if (event.user.email.startsWith('deny')) return api.access.deny('Not from this team');
  if (event.user.email.startsWith('stepup')) return api.multifactor.enable('any');
  if (event.user.email.startsWith('broken')) throw new Error('the rule broke');
  api.accessToken.setCustomClaim('https://example.com/team', 'blue');
};`;

type Answer = ApiResponse<any>;

/**
 * The sign-ins that create or prove an account somewhere else first (accepting an invitation, the
 * code of a social sign-in) run the workspace's post-login actions as a password sign-in does. An
 * action runs up to ACTION_TIMEOUT_MS (at most 5 s), and the sandbox's first start takes a second or
 * more: run inside the call's transaction, it held a connection (on the embedded database, the only
 * one) that long. Run on a pool of one whatever the database, the sandbox held at a gate.
 */
describe('sign-ins that run actions while the sandbox is slow', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let idp: TestIdp;
  let held = gate();
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), ALLOW_PRIVATE_IDP_TARGETS: 'true' }, { poolSize: 1 });
    ws = await createWorkspace(app, 'Slow rules');
    const created = await call(app, 'POST', '/api/v1/actions/', { token: ws.apiKey, body: { name: 'Gate', code: GATE } });
    expect(created.status).toBe(201);
    expect((await call(app, 'POST', `/api/v1/actions/${created.body.data.id}/deploy`, { token: ws.apiKey })).status).toBe(200);
    const base = app.deps.config.BASE_URL;
    idp = await startTestIdp([
      { client_id: 'identity-service', client_secret: 'idp-client-secret', redirect_uris: [`${base}/api/v1/auth/oauth/oidc/callback`] },
    ]);
    const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'identity-service', client_secret: 'idp-client-secret', issuer: idp.issuer, display_name: 'Acme ID' },
    });
    expect(put.status).toBe(201);
  });
  afterEach(() => {
    held.open();
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await idp.close();
    await app.close();
    await mail.stop();
  });

  /** Each call from an address of its own: the per-address limits are not what these tests are about. */
  const send = (method: string, path: string, opts: CallOptions = {}) =>
    call(app, method, path, { ...opts, headers: { 'x-forwarded-for': someIp(), ...opts.headers } });

  /** `runPostLogin` waits at a fresh gate, then answers as it would have. */
  function holdSandbox() {
    held = gate();
    const sandbox = app.deps.sandbox;
    const real = sandbox.runPostLogin.bind(sandbox);
    const waiting = held;
    vi.spyOn(sandbox, 'runPostLogin').mockImplementation(async (...args) => {
      waiting.start();
      await waiting.opened;
      return real(...args);
    });
    return waiting;
  }

  const failedRun = (kind: 'timeout' | 'crashed'): ActionOutcome => ({
    denied: null,
    claims: {},
    requireSecondFactor: false,
    logs: [],
    failure: { kind, message: 'The sandbox did not answer in time', line: null },
    durationMs: 100,
  });

  async function invitationToken(email: string): Promise<string> {
    expect((await send('POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } })).status).toBe(201);
    return linkTokenIn(await mail.waitFor(email), 'accept-invitation').token;
  }

  const accept = (token: string) => send('POST', '/api/v1/invitations/accept', { body: { token, password: 'invited passphrase' } });

  /** A social sign-in of `email` through the test provider, up to the one-time code the app exchanges. */
  async function socialCode(email: string): Promise<string> {
    const started = await send('GET', `/api/v1/auth/oauth/oidc/start?workspace_id=${ws.id}`);
    expect(started.status).toBe(302);
    idp.signInAs({ sub: `sub-${email}`, claims: { email, email_verified: true } });
    const callback = await idp.authorize(started.headers.get('location') as string);
    const back = await send('GET', `${callback.pathname}${callback.search}`);
    const code = new URL(back.headers.get('location') ?? 'http://none/').searchParams.get('code');
    expect(code, back.headers.get('location') ?? '').toBeTruthy();
    return code as string;
  }

  const exchange = (code: string) => send('POST', '/api/v1/auth/oauth/exchange', { body: { code } });

  /** The ids of the workspace's audit rows and outbox events so far. */
  async function rowIds(): Promise<Set<string>> {
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string }[]>(
        'select id from audit_events where workspace_id = ? union all select id from events where workspace_id = ?',
        [ws.id, ws.id],
      );
    return new Set(rows.map((row) => row.id));
  }

  /** The workspace's audit rows and outbox events written since `before`, as what they say (sorted). */
  async function writtenSince(before: Set<string>): Promise<string[]> {
    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string; line: string }[]>(
        `select id, 'audit ' || event_type || ' ' || outcome || coalesce(' ' || (details->>'reason'), '') as line
           from audit_events where workspace_id = ?
         union all
         select id, 'event ' || type as line from events where workspace_id = ?`,
        [ws.id, ws.id],
      );
    return rows
      .filter((row) => !before.has(row.id))
      .map((row) => row.line)
      .sort();
  }

  /**
   * The two sign-ins that ran their actions inside a transaction: each spends its credential (an
   * invitation's link, a social sign-in's one-time code), then runs the actions holding no connection.
   * `spent` is what spending the credential writes, whatever the actions decide.
   */
  const flows = [
    {
      name: 'accepting an invitation',
      credential: 'link',
      credentialFor: invitationToken,
      use: accept,
      spent: ['audit invitation.accept success', 'audit user.create success', 'event invitation.accepted', 'event user.created'],
    },
    { name: 'exchanging the code of a social sign-in', credential: 'code', credentialFor: socialCode, use: exchange, spent: [] },
  ];

  describe.each(flows)('$name', ({ credential, credentialFor, use, spent }) => {
    it(`holds no database connection while the action runs, and the ${credential} is spent meanwhile`, async () => {
      const secret = await credentialFor(uniqueEmail(`slow-${credential}`));
      const sandbox = holdSandbox();
      const signingIn = use(secret);
      await sandbox.started;
      expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
      const again = await use(secret);
      expect([again.status, again.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
      sandbox.open();
      const signedIn = await signingIn;
      expect(signedIn.status).toBe(200);
      expect(decodeJwt(signedIn.body.data.access_token)['https://example.com/team']).toBe('blue');
    });

    it(`signs in one of 20 uses of a ${credential} at once`, async () => {
      const secret = await credentialFor(uniqueEmail(`raced-${credential}`));
      const answers: Answer[] = await Promise.all(Array.from({ length: 20 }, () => use(secret)));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      expect(answers.filter((a) => a.status !== 200).map((a) => a.body.error?.code)).toEqual(
        Array.from({ length: 19 }, () => 'INVALID_TOKEN'),
      );
    });

    /**
     * What each ending writes (audit rows, webhook events): the same as when the whole call was one
     * transaction. A refusal keeps the account and the credential spent, as a sign-in refused later would.
     */
    it.each([
      ['allowed', 'welcome', null, 200],
      ['denied', 'deny', null, 403],
      ['refused for a missing second factor', 'stepup', null, 403],
      ['failed', 'broken', null, 403],
      ['timed out', 'welcome', 'timeout', 403],
      ['unavailable', 'welcome', 'unavailable', 503],
    ] as const)(
      `writes what it wrote before when the action %s, and the ${credential} stays spent`,
      async (_, prefix, sandboxFault, status) => {
        const email = uniqueEmail(prefix);
        const secret = await credentialFor(email);
        if (sandboxFault === 'timeout') vi.spyOn(app.deps.sandbox, 'runPostLogin').mockResolvedValue(failedRun('timeout'));
        if (sandboxFault === 'unavailable') {
          vi.spyOn(app.deps.sandbox, 'runPostLogin').mockRejectedValue(new AppError('UNAVAILABLE', 'Actions cannot run here'));
        }
        const before = await rowIds();
        const answer = await use(secret);
        expect(answer.status, JSON.stringify(answer.body)).toBe(status);
        const reason = { deny: 'action_denied', stepup: 'mfa_enrollment_required', broken: 'action_failed' }[prefix as string];
        const refusal =
          status === 200
            ? []
            : [`audit auth.login failure ${sandboxFault === 'unavailable' ? 'action_unavailable' : (reason ?? 'action_failed')}`];
        const signedIn = status === 200 ? ['audit auth.login success', 'event user.signed_in'] : [];
        expect(await writtenSince(before)).toEqual([...spent, ...refusal, ...signedIn].sort());
        const users = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token: ws.apiKey });
        expect(users.body.data.map((u: { email: string }) => u.email)).toEqual([email]);
        const again = await use(secret);
        expect([again.status, again.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
      },
    );
  });

  /**
   * How the other sign-ins already do it, kept so: a password sign-in (the API's and the hosted
   * page's) opens no transaction at all (auth/sign-in.ts), and answering a second-factor challenge
   * (the API's verify and the hosted code step) runs no action: the claims the actions gave at the
   * password wait on the challenge. The sandbox held at a gate there would hold the answer forever.
   */
  describe('the other sign-ins', () => {
    const authorizeUrl = async () => {
      const spa = await call(app, 'POST', '/api/v1/applications', {
        token: ws.apiKey,
        body: { name: 'SPA', type: 'spa', redirect_uris: [SPA_CALLBACK] },
      });
      expect(spa.status).toBe(201);
      const query = new URLSearchParams({
        client_id: spa.body.data.id,
        redirect_uri: SPA_CALLBACK,
        response_type: 'code',
        scope: 'openid',
        state: randomBytes(8).toString('hex'),
        code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
        code_challenge_method: 'S256',
      });
      return `/oauth/authorize?${query}`;
    };

    /** A fresh 30-second step of the app's clock, so no code of it is spent yet. */
    const nextStep = () => {
      const now = app.clock.now().getTime();
      app.clock.set(new Date(now - (now % 30_000) + 30_000 + 5_000));
    };

    it('holds no database connection while the action of a password sign-in runs, on the API or the hosted page', async () => {
      const email = uniqueEmail('password');
      expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } })).status).toBe(201);
      const api = holdSandbox();
      const signingIn = login(app, ws.id, email, PASSWORD);
      await api.started;
      expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
      api.open();
      expect((await signingIn).status).toBe(200);

      vi.restoreAllMocks();
      const browser = new Browser(app.url);
      const page = await browser.go(await authorizeUrl());
      const hosted = holdSandbox();
      const submitting = browser.go(formAction(page.body, 'Sign in'), { email, password: PASSWORD });
      await hosted.started;
      expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
      hosted.open();
      expect((await submitting).location).toMatch(/^http:\/\/localhost:5173\/callback\?code=/);
    });

    it('runs no action when a second-factor challenge is answered, on the API or the hosted code step', async () => {
      const email = uniqueEmail('second-factor');
      expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } })).status).toBe(201);
      const { accessToken } = await signIn(app, ws.id, email, PASSWORD);
      const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } });
      const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
      nextStep();
      const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
        token: accessToken,
        body: { code: codeAt(totp, app.clock) },
      });
      expect(confirmed.status).toBe(200);

      const challenged = await login(app, ws.id, email, PASSWORD);
      expect(challenged.body.data?.mfa_required).toBe(true);
      const browser = new Browser(app.url);
      const page = await browser.go(await authorizeUrl());
      const codeStep = await browser.go(formAction(page.body, 'Sign in'), { email, password: PASSWORD });
      expect(hiddenInput(codeStep.body, 'mfa_token')).toMatch(/^mfa_/);

      const sandbox = holdSandbox();
      nextStep();
      const verified = await send('POST', '/api/v1/auth/mfa/verify', {
        body: { mfa_token: challenged.body.data.mfa_token, code: codeAt(totp, app.clock) },
      });
      expect(verified.status).toBe(200);
      expect(decodeJwt(verified.body.data.access_token)['https://example.com/team']).toBe('blue');
      nextStep();
      const hidden = Object.fromEntries(
        [...codeStep.body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
      );
      const done = await browser.go(formAction(codeStep.body, 'Verify'), { ...hidden, code: codeAt(totp, app.clock) });
      expect(done.location).toMatch(/^http:\/\/localhost:5173\/callback\?code=/);
      expect(app.deps.sandbox.runPostLogin).not.toHaveBeenCalled();
      sandbox.open();
    });
  });
});
