import { createHash, randomBytes } from 'node:crypto';
import type { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn } from '../../../test/helpers/auth.ts';
import { Browser, formAction, hiddenInput } from '../../../test/helpers/browser.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { createLogger } from '../../core/logger.ts';
import { ActionSandbox } from './sandbox.ts';
import { authenticatorOf, codeAt } from '../../../test/helpers/authenticator.ts';

const PASSWORD = 'step-up passphrase';
const SPA_CALLBACK = 'http://localhost:5173/callback';

/** The access token's claims, read without verifying (the tests trust their own server). */
function claimsOf(accessToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;
}

describe('actions at sign-in', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  /** Moves the app's clock to the start of a fresh 30-second step, so no step is spent yet. */
  function nextStep() {
    const now = app.clock.now().getTime();
    app.clock.set(new Date(now - (now % 30_000) + 30_000 + 5_000));
  }
  const codeOf = (totp: TOTP) => codeAt(totp, app.clock);

  async function newUser(ws: TestWorkspace, role?: 'admin' | 'viewer', metadata?: Record<string, unknown>) {
    const email = uniqueEmail(role ?? 'member');
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email, password: PASSWORD, ...(metadata ? { metadata } : {}) },
    });
    expect(created.status).toBe(201);
    if (role) {
      const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
      const roleId = roles.body.data.find((r: { key: string }) => r.key === role).id;
      await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: created.body.data.id, role_id: roleId } });
    }
    return { email, id: created.body.data.id as string };
  }

  /** A user with a verified authenticator app (enrolled while no action requires one). */
  async function withFactor(ws: TestWorkspace, user: { email: string }) {
    const { accessToken } = await signIn(app, ws.id, user.email, PASSWORD);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    nextStep();
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: accessToken,
      body: { code: codeOf(totp) },
    });
    expect(verified.status).toBe(200);
    return totp;
  }

  async function deploy(ws: TestWorkspace, body: object): Promise<string> {
    const created = await call(app, 'POST', '/api/v1/actions/', { token: ws.apiKey, body });
    expect(created.status).toBe(201);
    const deployed = await call(app, 'POST', `/api/v1/actions/${created.body.data.id}/deploy`, { token: ws.apiKey });
    expect(deployed.status).toBe(200);
    return created.body.data.id as string;
  }

  const removeAction = (ws: TestWorkspace, id: string) => call(app, 'DELETE', `/api/v1/actions/${id}`, { token: ws.apiKey });

  async function loginFailures(ws: TestWorkspace, userId: string) {
    return app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ details: Record<string, unknown> }[]>(
        `select details from audit_events where workspace_id = ? and event_type = 'auth.login' and outcome = 'failure' and target_id = ?
          order by created_at, id`,
        [ws.id, userId],
      );
  }

  /** The workspace's newest scored attempt for `userId`, read through REST as an admin reads it. */
  async function latestScore(ws: TestWorkspace, userId: string) {
    const res = await call(app, 'GET', `/api/v1/threat/scores/recent?user_id=${userId}&per_page=1`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    return res.body.data[0] as { outcome: string; failure_reason: string | null };
  }

  describe('the step-up template', () => {
    let ws: TestWorkspace;
    let adminWithout: { email: string; id: string };
    let adminWith: { email: string; id: string };
    let adminTotp: TOTP;
    let member: { email: string; id: string };

    beforeAll(async () => {
      ws = await createWorkspace(app);
      adminWithout = await newUser(ws, 'admin');
      adminWith = await newUser(ws, 'admin');
      adminTotp = await withFactor(ws, adminWith);
      member = await newUser(ws);
      await deploy(ws, { template: 'require-mfa-for-admins' });
    });

    it('refuses an admin without a factor: 403 MFA_ENROLLMENT_REQUIRED asking to enroll first, audited', async () => {
      const res = await login(app, ws.id, adminWithout.email, PASSWORD);
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      expect(res.body.error.message).toMatch(/enroll .* first/);
      expect(JSON.stringify(res.body)).not.toContain('access_token');
      const rows = await loginFailures(ws, adminWithout.id);
      expect(rows.at(-1)?.details).toMatchObject({ reason: 'mfa_enrollment_required' });
      // Threat detection counts the refusal as a failure, not as the success its password step was.
      expect(await latestScore(ws, adminWithout.id)).toMatchObject({ outcome: 'failure', failure_reason: 'mfa_enrollment_required' });
      // The owner is refused the same way.
      expect((await login(app, ws.id, ws.owner.email, ws.owner.password)).body.error.code).toBe('MFA_ENROLLMENT_REQUIRED');
      // A wrong password is still only INVALID_CREDENTIALS: actions run after the password.
      expect((await login(app, ws.id, adminWithout.email, 'not the password')).body.error.code).toBe('INVALID_CREDENTIALS');
    });

    it('challenges an admin with a verified factor, and the code completes the sign-in', async () => {
      const res = await login(app, ws.id, adminWith.email, PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ mfa_required: true, available_factors: ['totp'] });
      expect(res.body.data.access_token).toBeUndefined();
      nextStep();
      const verified = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
        body: { mfa_token: res.body.data.mfa_token, code: codeOf(adminTotp) },
      });
      expect(verified.status).toBe(200);
      expect(claimsOf(verified.body.data.access_token)).toMatchObject({ sub: adminWith.id, roles: ['admin', 'member'] });
    });

    it('applies on the hosted OAuth sign-in too: the page refuses with the message, or asks for the code', async () => {
      const spa = await call(app, 'POST', '/api/v1/applications', {
        token: ws.apiKey,
        body: { name: 'SPA', type: 'spa', redirect_uris: [SPA_CALLBACK] },
      });
      const authorize = () => {
        const verifier = randomBytes(32).toString('base64url');
        const query = new URLSearchParams({
          client_id: spa.body.data.id,
          redirect_uri: SPA_CALLBACK,
          response_type: 'code',
          scope: 'openid',
          state: randomBytes(8).toString('hex'),
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
        });
        return `/oauth/authorize?${query}`;
      };
      const refusedBrowser = new Browser(app.url);
      const page = await refusedBrowser.go(authorize());
      const refused = await refusedBrowser.go(formAction(page.body, 'Sign in'), { email: adminWithout.email, password: PASSWORD });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('enroll an authenticator app first');
      expect(refused.location).toBeUndefined();

      const challengedBrowser = new Browser(app.url);
      const again = await challengedBrowser.go(authorize());
      const challenged = await challengedBrowser.go(formAction(again.body, 'Sign in'), { email: adminWith.email, password: PASSWORD });
      expect(challenged.status).toBe(200);
      expect(hiddenInput(challenged.body, 'mfa_token')).toMatch(/^mfa_/);
    });

    it('lets a member sign in as usual', async () => {
      const res = await login(app, ws.id, member.email, PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.data.access_token).toBeDefined();
      expect(res.body.data.mfa_required).toBeUndefined();
    });
  });

  describe('Auth0-style code', () => {
    let ws: TestWorkspace;

    beforeAll(async () => {
      ws = await createWorkspace(app);
    });

    it('api.multifactor.enable requires the second factor: 403 MFA_ENROLLMENT_REQUIRED without one, the challenge with one', async () => {
      const without = await newUser(ws);
      const withOne = await newUser(ws);
      const totp = await withFactor(ws, withOne);
      const id = await deploy(ws, {
        name: 'Auth0 MFA',
        code: `exports.onExecutePostLogin = async (event, api) => {
  api.multifactor.enable('any');
};`,
      });
      try {
        const refused = await login(app, ws.id, without.email, PASSWORD);
        expect(refused.status).toBe(403);
        expect(refused.body.error.code).toBe('MFA_ENROLLMENT_REQUIRED');
        expect((await loginFailures(ws, without.id)).at(-1)?.details).toMatchObject({ reason: 'mfa_enrollment_required' });

        const challenged = await login(app, ws.id, withOne.email, PASSWORD);
        expect(challenged.status).toBe(200);
        expect(challenged.body.data).toMatchObject({ mfa_required: true, available_factors: ['totp'] });
        nextStep();
        const verified = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
          body: { mfa_token: challenged.body.data.mfa_token, code: codeOf(totp) },
        });
        expect(verified.status).toBe(200);
        expect(claimsOf(verified.body.data.access_token)).toMatchObject({ sub: withOne.id });
      } finally {
        await removeAction(ws, id);
      }
    });

    it('reads event.user.app_metadata, user_id, email_verified and event.authorization.roles; idToken claims reach the token', async () => {
      const admin = await newUser(ws, 'admin', { plan: 'gold' });
      const blocked = await newUser(ws, undefined, { blocked: true });
      const id = await deploy(ws, {
        name: 'Auth0 claims',
        code: `exports.onExecutePostLogin = async (event, api) => {
  if (event.user.app_metadata.blocked) return api.access.deny('Blocked through app_metadata');
  api.idToken.setCustomClaim('https://example.com/plan', event.user.app_metadata.plan ?? 'free');
  api.accessToken.setCustomClaim('https://example.com/roles', event.authorization.roles);
  api.idToken.setCustomClaim('https://example.com/user', [event.user.user_id, event.user.email_verified, event.user.user_metadata]);
};`,
      });
      try {
        const res = await login(app, ws.id, admin.email, PASSWORD);
        expect(res.status).toBe(200);
        expect(claimsOf(res.body.data.access_token)).toMatchObject({
          sub: admin.id,
          'https://example.com/plan': 'gold',
          'https://example.com/roles': ['admin', 'member'],
          'https://example.com/user': [admin.id, false, {}],
        });
        const refused = await login(app, ws.id, blocked.email, PASSWORD);
        expect(refused.status).toBe(403);
        expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'Blocked through app_metadata' });
      } finally {
        await removeAction(ws, id);
      }
    });
  });

  describe('decisions and claims', () => {
    let ws: TestWorkspace;

    beforeAll(async () => {
      ws = await createWorkspace(app);
    });

    it('adds custom claims to the access token, after a challenge and after a refresh too', async () => {
      const user = await newUser(ws, undefined, { plan: 'gold' });
      const withTotp = await newUser(ws);
      const totp = await withFactor(ws, withTotp);
      const id = await deploy(ws, {
        name: 'Plan claim',
        code: `exports.onExecutePostLogin = async (event, api) => {
  api.accessToken.setCustomClaim('https://example.com/plan', event.user.metadata.plan ?? 'free');
  api.accessToken.setCustomClaim('email', event.user.email);
};`,
      });
      try {
        const res = await login(app, ws.id, user.email, PASSWORD);
        expect(res.status).toBe(200);
        const claims = claimsOf(res.body.data.access_token);
        expect(claims).toMatchObject({ 'https://example.com/plan': 'gold', email: user.email, sub: user.id, tid: ws.id });
        // The token still works, and the claims survive a refresh.
        expect((await call(app, 'GET', '/api/v1/mfa/factors', { token: res.body.data.access_token })).status).toBe(200);
        const refreshed = await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: res.body.data.refresh_token } });
        expect(refreshed.status).toBe(200);
        expect(claimsOf(refreshed.body.data.access_token)).toMatchObject({ 'https://example.com/plan': 'gold' });

        const challenged = await login(app, ws.id, withTotp.email, PASSWORD);
        expect(challenged.body.data.mfa_required).toBe(true);
        nextStep();
        const verified = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
          body: { mfa_token: challenged.body.data.mfa_token, code: codeOf(totp) },
        });
        expect(verified.status).toBe(200);
        expect(claimsOf(verified.body.data.access_token)).toMatchObject({ 'https://example.com/plan': 'free', email: withTotp.email });
      } finally {
        await removeAction(ws, id);
      }
    });

    it('a deny refuses the sign-in: 403 FORBIDDEN with the reason, and an audit row', async () => {
      const blocked = await newUser(ws, undefined, { blocked: true });
      const fine = await newUser(ws);
      const id = await deploy(ws, {
        name: 'Block flagged users',
        code: `exports.onExecutePostLogin = async (event, api) => {
  if (event.user.metadata.blocked) api.access.deny('This account is blocked; contact support');
};`,
      });
      const stats = async () => (await call(app, 'GET', '/api/v1/threat/stats', { token: ws.apiKey })).body.data;
      try {
        const before = await stats();
        const res = await login(app, ws.id, blocked.email, PASSWORD);
        expect(res.status).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', message: 'This account is blocked; contact support' });
        const rows = await loginFailures(ws, blocked.id);
        expect(rows.at(-1)?.details).toMatchObject({
          reason: 'action_denied',
          action_id: id,
          message: 'This account is blocked; contact support',
        });
        expect(await latestScore(ws, blocked.id)).toMatchObject({ outcome: 'failure', failure_reason: 'action_denied' });
        expect(await stats()).toMatchObject({ successes: before.successes, failures: before.failures + 1 });
        expect((await login(app, ws.id, fine.email, PASSWORD)).status).toBe(200);
        expect(await latestScore(ws, fine.id)).toMatchObject({ outcome: 'allowed', failure_reason: null });
      } finally {
        await removeAction(ws, id);
      }
      expect((await login(app, ws.id, blocked.email, PASSWORD)).status).toBe(200);
    });

    it('fails closed: a throwing or endless action refuses every sign-in, audited with what went wrong', async () => {
      const user = await newUser(ws);
      for (const [code, kind] of [
        ['exports.onExecutePostLogin = async (event) => {\n  return event.user.profile.name;\n};', 'threw'],
        ['exports.onExecutePostLogin = async () => { while (true) {} };', 'timeout'],
      ] as const) {
        const id = await deploy(ws, { name: `Failing ${kind}`, code });
        try {
          const res = await login(app, ws.id, user.email, PASSWORD);
          expect(res.status, kind).toBe(403);
          expect(res.body.error.code).toBe('FORBIDDEN');
          expect(res.body.error.message).not.toContain('profile');
          const rows = await loginFailures(ws, user.id);
          expect(rows.at(-1)?.details).toMatchObject({ reason: 'action_failed', action_id: id, failure: kind });
        } finally {
          await removeAction(ws, id);
        }
      }
      expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
    });

    it('refuses sign-ins of a workspace with deployed actions when the sandbox is unavailable (503, audited)', async () => {
      const user = await newUser(ws);
      const id = await deploy(ws, { name: 'Harmless', code: 'exports.onExecutePostLogin = async () => {};' });
      const real = app.deps.sandbox;
      const missing = new ActionSandbox({ timeoutMs: 100, memoryMb: 32, log: createLogger('silent'), packageName: 'isolated-vm-absent' });
      app.deps.sandbox = missing;
      try {
        const res = await login(app, ws.id, user.email, PASSWORD);
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('UNAVAILABLE');
        expect(res.body.error.message).toContain('isolated-vm');
        expect((await loginFailures(ws, user.id)).at(-1)?.details).toMatchObject({ reason: 'action_unavailable', action_id: id });
        // Workspaces without deployed actions never ask the sandbox.
        const elsewhere = await createWorkspace(app);
        expect((await login(app, elsewhere.id, elsewhere.owner.email, elsewhere.owner.password)).status).toBe(200);
      } finally {
        app.deps.sandbox = real;
        await missing.close();
        await removeAction(ws, id);
      }
    });

    it('a deployed action runs in its own workspace only', async () => {
      const id = await deploy(ws, { name: 'Deny all', code: `exports.onExecutePostLogin = async (e, api) => api.access.deny('closed');` });
      try {
        const elsewhere = await createWorkspace(app);
        expect((await login(app, elsewhere.id, elsewhere.owner.email, elsewhere.owner.password)).status).toBe(200);
        expect((await login(app, ws.id, ws.owner.email, ws.owner.password)).status).toBe(403);
      } finally {
        await removeAction(ws, id);
      }
    });
  });
});
