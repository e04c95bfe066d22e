import type { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { MailSink, resetTokenIn } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { authenticatorOf, codeAt as codeAtClock } from '../../../test/helpers/authenticator.ts';

const PASSWORD = 'second factor passphrase';

describe('second factor (TOTP)', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start() });
    ws = await createWorkspace(app);
  });
  afterAll(() => mail.stop());
  afterAll(() => app.close());

  const codeAt = (totp: TOTP, offsetSteps = 0) => codeAtClock(totp, app.clock, offsetSteps);

  /** Moves the app's clock to the start of a fresh 30-second step, so no step is spent yet. */
  function nextStep() {
    const now = app.clock.now().getTime();
    app.clock.set(new Date(now - (now % 30_000) + 30_000 + 5_000));
  }

  async function newUser() {
    const email = uniqueEmail('mfa');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(created.status).toBe(201);
    const session = await signIn(app, ws.id, email, PASSWORD);
    return { email, id: created.body.data.id as string, token: session.accessToken };
  }

  async function enroll(token: string, name = 'Phone') {
    const res = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token, body: { name } });
    expect(res.status).toBe(201);
    return res.body.data;
  }

  async function enrolledUser() {
    const user = await newUser();
    const enrollment = await enroll(user.token);
    const totp = authenticatorOf(enrollment.otpauth_uri);
    nextStep();
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrollment.factor.id}/verify`, {
      token: user.token,
      body: { code: codeAt(totp) },
    });
    expect(verified.status).toBe(200);
    return { ...user, totp, factorId: enrollment.factor.id as string };
  }

  const verify = (mfaToken: string, code: unknown) => call(app, 'POST', '/api/v1/auth/mfa/verify', { body: { mfa_token: mfaToken, code } });

  it("names the account and the workspace apart in the otpauth URI when the workspace's name has a colon", async () => {
    const colonWs = await createWorkspace(app, 'Acme: Billing');
    const email = uniqueEmail('colon');
    const created = await call(app, 'POST', '/api/v1/users', { token: colonWs.apiKey, body: { email, password: PASSWORD } });
    expect(created.status).toBe(201);
    const { accessToken } = await signIn(app, colonWs.id, email, PASSWORD);
    const data = await enroll(accessToken, 'Phone');
    const totp = authenticatorOf(data.otpauth_uri);
    expect({ issuer: totp.issuer, label: totp.label }).toEqual({ issuer: 'Acme Billing', label: email });
  });

  it('enrolls: Pending verification, a base32 secret of 160 bits, an otpauth URI and a QR code', async () => {
    const user = await newUser();
    const data = await enroll(user.token, 'Work phone');
    expect(data.factor).toMatchObject({ name: 'Work phone', kind: 'totp', status: 'Pending verification' });
    expect(data.factor.id).toMatch(/^fac_/);
    expect(data.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(data.otpauth_uri).toContain(`secret=${data.secret}`);
    const totp = authenticatorOf(data.otpauth_uri);
    expect([totp.algorithm, totp.digits, totp.period]).toEqual(['SHA1', 6, 30]);
    expect(data.qr_code_data_uri).toMatch(/^data:image\/png;base64,/);
    const unnamed = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: user.token });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.data.factor.name).toBe('Authenticator app');
    await call(app, 'DELETE', `/api/v1/mfa/factors/${unnamed.body.data.factor.id}`, { token: user.token });
    const listed = await call(app, 'GET', '/api/v1/mfa/factors', { token: user.token });
    expect(listed.body.data).toEqual([data.factor]);
    expect(JSON.stringify(listed.body)).not.toContain(data.secret);
    // A wrong code is refused and audited with its reason.
    const wrong = await call(app, 'POST', `/api/v1/mfa/factors/${data.factor.id}/verify`, {
      token: user.token,
      body: { code: String((Number(codeAt(totp)) + 500_000) % 1_000_000).padStart(6, '0') },
    });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CODE']);
    const audited = await call(
      app,
      'GET',
      `/api/v1/audit/events/?event_type=mfa.factor_verify&outcome=failure&target_id=${data.factor.id}`,
      {
        token: ws.apiKey,
      },
    );
    expect(audited.body.data.map((e: { details: unknown }) => e.details)).toEqual([{ reason: 'wrong_code' }]);
  });

  it('tells mfa.factor_removed only of a factor that was enrolled (verified), as mfa.factor_enrolled told of it', async () => {
    const user = await enrolledUser();
    const pending = await enroll(user.token, 'Never confirmed');
    for (const id of [pending.factor.id as string, user.factorId]) {
      expect((await call(app, 'DELETE', `/api/v1/mfa/factors/${id}`, { token: user.token })).status).toBe(200);
    }
    const events = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ type: string; payload: Record<string, unknown> }[]>(
        `select type, payload from events where workspace_id = ? and type like 'mfa.%' and payload->>'user_id' = ? order by created_at, id`,
        [ws.id, user.id],
      );
    const told = { user_id: user.id, factor_id: user.factorId, kind: 'totp', name: 'Phone' };
    expect(events).toEqual([
      { type: 'mfa.factor_enrolled', payload: told },
      { type: 'mfa.factor_removed', payload: told },
    ]);
  });

  it('a pending factor is not used at sign-in; once verified, every sign-in asks for a code', async () => {
    const user = await newUser();
    const data = await enroll(user.token);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.data.access_token).toBeDefined();

    nextStep();
    const wrong = await call(app, 'POST', `/api/v1/mfa/factors/${data.factor.id}/verify`, { token: user.token, body: { code: '000000' } });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CODE']);
    const ok = await call(app, 'POST', `/api/v1/mfa/factors/${data.factor.id}/verify`, {
      token: user.token,
      body: { code: codeAt(authenticatorOf(data.otpauth_uri)) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.status).toBe('Verified');

    const challenged = await login(app, ws.id, user.email, PASSWORD);
    expect(challenged.status).toBe(200);
    expect(challenged.body.data).toEqual({
      mfa_required: true,
      mfa_token: expect.any(String),
      available_factors: ['totp'],
      challenge_id: expect.stringMatching(/^chl_/),
    });
    expect(challenged.body.data.access_token).toBeUndefined();
  });

  it('completes a challenge with the same body a plain sign-in returns; the mfa_token works once', async () => {
    const user = await enrolledUser();
    nextStep();
    const challenged = await login(app, ws.id, user.email, PASSWORD);
    const challenge = challenged.body.data;
    const done = await verify(challenge.mfa_token, codeAt(user.totp));
    expect(done.status).toBe(200);
    expect(done.body.data).toMatchObject({ token_type: 'Bearer', expires_in: 900, user: { id: user.id, email: user.email } });
    // Each call of the sign-in leaves one row: the password step its auth.login, the code its auth.mfa_verify.
    const rows = await call(app, 'GET', `/api/v1/audit/events/?target_id=${user.id}&per_page=100`, { token: ws.apiKey });
    const ofCall = (res: { headers: Headers }) =>
      rows.body.data
        .filter((e: { request_id: string }) => e.request_id === res.headers.get('x-request-id'))
        .map((e: { event_type: string; outcome: string; details: Record<string, unknown> }) => [
          e.event_type,
          e.outcome,
          e.details.mfa_required ?? null,
        ]);
    expect(ofCall(challenged)).toEqual([['auth.login', 'success', true]]);
    expect(ofCall(done)).toEqual([['auth.mfa_verify', 'success', null]]);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: done.body.data.access_token })).status).toBe(200);
    nextStep();
    const again = await verify(challenge.mfa_token, codeAt(user.totp));
    expect([again.status, again.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // The replayed token still names its user: the attempt is audited.
    const audited = await call(app, 'GET', `/api/v1/audit/events/?event_type=auth.mfa_verify&outcome=failure&target_id=${user.id}`, {
      token: ws.apiKey,
    });
    expect(audited.body.data.map((e: { details: { reason: string } }) => e.details.reason)).toEqual(['token_used']);
    expect(audited.body.data[0].request_id).toBe(again.headers.get('x-request-id'));
  });

  it('refuses an mfa_token presented with another workspace in X-Tenant-ID, without spending it', async () => {
    const user = await enrolledUser();
    const other = await createWorkspace(app);
    nextStep();
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const send = (tenant: string) =>
      call(app, 'POST', '/api/v1/auth/mfa/verify', {
        headers: { 'x-tenant-id': tenant },
        body: { mfa_token: challenge.mfa_token, code: codeAt(user.totp) },
      });
    const foreign = await send(other.id);
    expect([foreign.status, foreign.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await send(ws.id)).status).toBe(200);
  });

  it('takes back the challenge_id it gave with the mfa_token; one of another challenge is INVALID_TOKEN and spends nothing', async () => {
    const user = await enrolledUser();
    nextStep();
    const first = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const second = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const send = (challengeId: unknown) =>
      call(app, 'POST', '/api/v1/auth/mfa/verify', {
        body: { mfa_token: second.mfa_token, code: codeAt(user.totp), challenge_id: challengeId },
      });
    const crossed = await send(first.challenge_id);
    expect([crossed.status, crossed.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const malformed = await send(42);
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const echoed = await send(second.challenge_id);
    expect(echoed.status).toBe(200);
    expect(echoed.body.data.access_token).toBeDefined();
  });

  it('never accepts the same step twice (replay), even with a new challenge', async () => {
    const user = await enrolledUser();
    nextStep();
    const code = codeAt(user.totp);
    const first = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    expect((await verify(first.mfa_token, code)).status).toBe(200);
    const second = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const replay = await verify(second.mfa_token, code);
    expect([replay.status, replay.body.error.code]).toEqual([401, 'INVALID_CODE']);
  });

  it('ends a run of wrong passwords at the right one, even when the code step is not finished', async () => {
    const user = await enrolledUser();
    for (let i = 0; i < 9; i++) expect((await login(app, ws.id, user.email, `wrong ${i} password`)).status).toBe(401);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.data.mfa_required).toBe(true);
    for (let i = 0; i < 9; i++) expect((await login(app, ws.id, user.email, `again ${i} wrong`)).status).toBe(401);
    const still = await login(app, ws.id, user.email, PASSWORD);
    expect([still.status, still.body.data?.mfa_required]).toEqual([200, true]);
  });

  it('gives no tokens to an account deactivated or locked after its challenge was issued', async () => {
    const gone = await enrolledUser();
    nextStep();
    const goneChallenge = (await login(app, ws.id, gone.email, PASSWORD)).body.data;
    await call(app, 'PATCH', `/api/v1/users/${gone.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    const refused = await verify(goneChallenge.mfa_token, codeAt(gone.totp));
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ACCOUNT_DEACTIVATED']);
    expect(refused.body.data).toBeUndefined();

    const locked = await enrolledUser();
    nextStep();
    const lockedChallenge = (await login(app, ws.id, locked.email, PASSWORD)).body.data;
    for (let i = 0; i < 10; i++) await login(app, ws.id, locked.email, `wrong ${i} password`);
    const refusedLocked = await verify(lockedChallenge.mfa_token, codeAt(locked.totp));
    expect([refusedLocked.status, refusedLocked.body.error.code]).toEqual([403, 'ACCOUNT_LOCKED']);
    // Unlocked by an admin, the same challenge completes.
    await call(app, 'PATCH', `/api/v1/users/${locked.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect((await verify(lockedChallenge.mfa_token, codeAt(locked.totp))).status).toBe(200);
  });

  it('spends steps per factor: a second authenticator is confirmed in the same 30 seconds as the first', async () => {
    const user = await enrolledUser();
    const tablet = await enroll(user.token, 'Tablet');
    const tabletTotp = authenticatorOf(tablet.otpauth_uri);
    // enrolledUser confirmed the phone in this very step.
    const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${tablet.factor.id}/verify`, {
      token: user.token,
      body: { code: codeAt(tabletTotp) },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data.status).toBe('Verified');
    // Each factor still refuses its own code twice.
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const replay = await verify(challenge.mfa_token, codeAt(tabletTotp));
    expect([replay.status, replay.body.error.code]).toEqual([401, 'INVALID_CODE']);
    expect((await verify(challenge.mfa_token, codeAt(user.totp))).status).toBe(401);
  });

  it('accepts one step either side and refuses two', async () => {
    const user = await enrolledUser();
    for (const [offset, expected] of [
      [-2, 401],
      [2, 401],
      [-1, 200],
      [0, 200],
      [1, 200],
    ] as const) {
      nextStep();
      const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
      // A code from T+1 spends step T+1; move past it before the next case.
      const res = await verify(challenge.mfa_token, codeAt(user.totp, offset));
      expect(res.status, `step ${offset}`).toBe(expected);
      if (offset === 1) nextStep();
    }
  });

  it('expires the mfa_token after 5 minutes', async () => {
    const user = await enrolledUser();
    nextStep();
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    app.clock.advance(5 * 60 * 1000 + 1000);
    const res = await verify(challenge.mfa_token, codeAt(user.totp));
    expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('lets exactly one of two concurrent uses of one mfa_token succeed', async () => {
    const user = await enrolledUser();
    nextStep();
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const code = codeAt(user.totp);
    const results = await Promise.all([verify(challenge.mfa_token, code), verify(challenge.mfa_token, code)]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('allows 5 attempts per 5 minutes per user, malformed codes included, then 429', async () => {
    const user = await enrolledUser();
    nextStep();
    const a = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const b = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    const attempts = await Promise.all([
      verify(a.mfa_token, '000000'),
      verify(a.mfa_token, ''),
      verify(b.mfa_token, '12345'),
      verify(b.mfa_token, 123456),
      verify(a.mfa_token, ['123456']),
    ]);
    expect(attempts.map((r) => r.status).sort()).toEqual([400, 400, 400, 400, 401]);
    const limited = await verify(b.mfa_token, codeAt(user.totp));
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The first refused code of the window is on record, once.
    const again = await verify(a.mfa_token, codeAt(user.totp));
    expect(again.status).toBe(429);
    const rows = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.mfa_verify&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    const refusals = rows.body.data.filter((e: { details: { reason?: string } }) => e.details.reason === 'rate_limited');
    expect(refusals.map((e: { request_id: string }) => e.request_id)).toContain(limited.headers.get('x-request-id'));
    expect(refusals.map((e: { request_id: string }) => e.request_id)).not.toContain(again.headers.get('x-request-id'));
  });

  it('answers malformed codes 400 and never 500', async () => {
    const user = await enrolledUser();
    nextStep();
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    for (const code of ['1234567', 'abcdef', 'x'.repeat(10_000)]) {
      const res = await verify(challenge.mfa_token, code);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    }
    expect((await verify('mfa_unknown', '123456')).body.error.code).toBe('INVALID_TOKEN');
    // A malformed code is a malformed body, whatever the token.
    for (const code of [12, 'abcdef', null]) {
      const res = await verify('mfa_unknown', code);
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('keeps factors to their owner: another user’s factor is 404; an mfa_token is no bearer token', async () => {
    const owner = await enrolledUser();
    const other = await newUser();
    expect((await call(app, 'DELETE', `/api/v1/mfa/factors/${owner.factorId}`, { token: other.token })).status).toBe(404);
    expect(
      (await call(app, 'POST', `/api/v1/mfa/factors/${owner.factorId}/verify`, { token: other.token, body: { code: '123456' } })).status,
    ).toBe(404);
    nextStep();
    const challenge = (await login(app, ws.id, owner.email, PASSWORD)).body.data;
    const asBearer = await call(app, 'GET', '/api/v1/mfa/factors', { token: challenge.mfa_token });
    expect([asBearer.status, asBearer.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('removing the only factor turns the challenge off', async () => {
    const user = await enrolledUser();
    const removed = await call(app, 'DELETE', `/api/v1/mfa/factors/${user.factorId}`, { token: user.token });
    expect(removed.body.data).toEqual({ id: user.factorId, deleted: true });
    expect((await login(app, ws.id, user.email, PASSWORD)).body.data.access_token).toBeDefined();
  });

  it('does not let a password reset bypass the second factor', async () => {
    const user = await enrolledUser();
    await call(app, 'POST', '/api/v1/auth/password/forgot', { headers: { 'x-tenant-id': ws.id }, body: { email: user.email } });
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    const reset = await call(app, 'POST', '/api/v1/auth/password/reset', { body: { token, password: 'a fresh passphrase' } });
    expect(reset.status).toBe(200);
    const next = await login(app, ws.id, user.email, 'a fresh passphrase');
    expect(next.body.data.mfa_required).toBe(true);
    expect(next.body.data.access_token).toBeUndefined();
  });

  it("ends a sign-in waiting for its code with the user's sessions: after a change, a reset or revoke-all its mfa_token is dead", async () => {
    const endings: Record<string, (user: Awaited<ReturnType<typeof enrolledUser>>) => Promise<void>> = {
      change: async (user) => {
        const changed = await call(app, 'POST', '/api/v1/auth/password/change', {
          token: user.token,
          body: { current_password: PASSWORD, new_password: 'a changed passphrase' },
        });
        expect(changed.status).toBe(200);
      },
      reset: async (user) => {
        await call(app, 'POST', '/api/v1/auth/password/forgot', { headers: { 'x-tenant-id': ws.id }, body: { email: user.email } });
        const { token } = resetTokenIn(await mail.waitFor(user.email));
        expect((await call(app, 'POST', '/api/v1/auth/password/reset', { body: { token, password: 'a reset passphrase' } })).status).toBe(
          200,
        );
      },
      revokeAll: async (user) => {
        expect((await call(app, 'POST', '/api/v1/auth/sessions/revoke-all', { token: user.token })).status).toBe(200);
      },
    };
    for (const [name, end] of Object.entries(endings)) {
      const user = await enrolledUser();
      const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
      expect(challenge.mfa_required).toBe(true);
      await end(user);
      nextStep();
      const res = await verify(challenge.mfa_token, codeAt(user.totp));
      expect([name, res.status, res.body.error?.code]).toEqual([name, 401, 'INVALID_TOKEN']);
    }
  });

  it('shows admins, through GraphQL, how many verified factors a user has and of which kinds', async () => {
    const user = await enrolledUser();
    await enroll(user.token, 'Pending one');
    const res = await graphql(app, 'query($id: ID!) { user(id: $id) { id mfa { verified kinds } } }', { id: user.id }, ws.apiKey);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.user.mfa).toEqual({ verified: 1, kinds: ['totp'] });
    const rest = await call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey });
    expect(rest.body.data.mfa_enabled).toBe(true);
    expect(JSON.stringify(res.body)).not.toMatch(/secret/i);
  });

  /** The caller's factors as the API lists them: id, name and status, oldest first. */
  async function factorsOf(token: string) {
    const res = await call(app, 'GET', '/api/v1/mfa/factors?per_page=100', { token });
    expect(res.status).toBe(200);
    return (res.body.data as { id: string; name: string; status: string }[]).map(({ id, name, status }) => ({ id, name, status }));
  }

  it('keeps at most 5 factors pending: a sixth try replaces the oldest pending one, recorded as its removal and told to nobody', async () => {
    const user = await enrolledUser();
    const tries = [];
    for (let i = 1; i <= 6; i++) {
      app.clock.advance(1000);
      tries.push((await enroll(user.token, `Try ${i}`)).factor.id as string);
    }
    const [oldest, ...kept] = tries;
    expect(await factorsOf(user.token)).toEqual(
      [
        { id: user.factorId, name: 'Phone', status: 'Verified' },
        ...kept.map((id, i) => ({ id, name: `Try ${i + 2}`, status: 'Pending verification' })),
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    const gone = await call(app, 'POST', `/api/v1/mfa/factors/${oldest}/verify`, { token: user.token, body: { code: '123456' } });
    expect([gone.status, gone.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const removed = await call(app, 'GET', `/api/v1/audit/events/?event_type=mfa.factor_remove&target_id=${oldest}`, { token: ws.apiKey });
    expect(removed.body.data.map((e: { actor: unknown; details: unknown }) => [e.actor, e.details])).toEqual([
      [
        { type: 'user', id: user.id },
        { name: 'Try 1', status: 'Pending verification', replaced_by: kept[4] },
      ],
    ]);
    const events = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ type: string }[]>(
        `select type from events where workspace_id = ? and type = 'mfa.factor_removed' and payload->>'user_id' = ?`,
        [ws.id, user.id],
      );
    expect(events).toEqual([]);
  });

  it('refuses a factor past 20 verified ones with 409 CONFLICT, audited; one pending among 20 is replaced instead', async () => {
    const user = await enrolledUser();
    const verified = [user.factorId];
    for (let i = 2; i <= 20; i++) {
      const enrollment = await enroll(user.token, `App ${i}`);
      const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${enrollment.factor.id}/verify`, {
        token: user.token,
        body: { code: codeAt(authenticatorOf(enrollment.otpauth_uri)) },
      });
      expect(confirmed.status).toBe(200);
      verified.push(enrollment.factor.id as string);
    }
    const refused = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: user.token, body: { name: 'One too many' } });
    expect([refused.status, refused.body.error]).toEqual([
      409,
      { code: 'CONFLICT', message: 'This account has 20 verified factors, the most it may have; remove one first' },
    ]);
    const audited = await call(app, 'GET', '/api/v1/audit/events/?event_type=mfa.factor_enroll&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    const row = audited.body.data.find((e: { request_id: string }) => e.request_id === refused.headers.get('x-request-id'));
    expect(row?.details).toEqual({ reason: 'CONFLICT', status: 409 });
    expect((await factorsOf(user.token)).length).toBe(20);

    expect((await call(app, 'DELETE', `/api/v1/mfa/factors/${verified[0]}`, { token: user.token })).status).toBe(200);
    const abandoned = await enroll(user.token, 'Abandoned');
    const retried = await enroll(user.token, 'Retried');
    const held = await factorsOf(user.token);
    expect(held.length).toBe(20);
    expect(held.filter((f) => f.status === 'Pending verification')).toEqual([
      { id: retried.factor.id, name: 'Retried', status: 'Pending verification' },
    ]);
    expect(held.some((f) => f.id === abandoned.factor.id)).toBe(false);
  });

  it('lists factors a page at a time with meta; bad paging is 400', async () => {
    const user = await newUser();
    const a = await enroll(user.token, 'First phone');
    const b = await enroll(user.token, 'Second phone');
    const all = await call(app, 'GET', '/api/v1/mfa/factors', { token: user.token });
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: 2, page: 1, per_page: 20 });
    expect(all.body.data.map((f: { id: string }) => f.id)).toEqual([a.factor.id, b.factor.id].sort());
    const second = await call(app, 'GET', '/api/v1/mfa/factors?page=2&per_page=1', { token: user.token });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual([all.body.data[1]]);
    expect(second.body.meta).toEqual({ total: 2, page: 2, per_page: 1 });
    for (const query of ['page=0', 'per_page=101', 'per_page=abc', 'page=abc']) {
      const bad = await call(app, 'GET', `/api/v1/mfa/factors?${query}`, { token: user.token });
      expect([bad.status, bad.body.error.code], query).toEqual([400, 'BAD_REQUEST']);
    }
  });
});

/**
 * The embedded database has one connection (its pool's size), which a mutation's transaction holds:
 * a write that asks for a second one waits for the pool's acquire timeout, a minute, and with it every
 * request. Run on a pool of one here whatever the database.
 */
describe('second factor on one database connection', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({}, { poolSize: 1 });
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('the first refused code of the window answers 429 at once, its audit row written in the same transaction', async () => {
    const email = uniqueEmail('mfa-pool');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    const { accessToken } = await signIn(app, ws.id, email, PASSWORD);
    const enrollment = (await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } })).body.data;
    const code = codeAtClock(authenticatorOf(enrollment.otpauth_uri), app.clock);
    await call(app, 'POST', `/api/v1/mfa/factors/${enrollment.factor.id}/verify`, { token: accessToken, body: { code } });
    const challenge = (await login(app, ws.id, email, PASSWORD)).body.data;
    for (let i = 0; i < 5; i++) {
      const wrong = await call(app, 'POST', '/api/v1/auth/mfa/verify', { body: { mfa_token: challenge.mfa_token, code: '000000' } });
      expect(wrong.status).toBe(401);
    }
    const limited = await call(app, 'POST', '/api/v1/auth/mfa/verify', { body: { mfa_token: challenge.mfa_token, code: '000000' } });
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    const rows = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.mfa_verify&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    const refusal = rows.body.data.find((e: { request_id: string }) => e.request_id === limited.headers.get('x-request-id'));
    expect(refusal?.details).toMatchObject({ reason: 'rate_limited', limit: 5 });
  });
});
