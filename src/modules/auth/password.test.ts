import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../core/passwords.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn, someIp } from '../../../test/helpers/auth.ts';
import { whileHashesWait } from '../../../test/helpers/hashing.ts';
import { call } from '../../../test/helpers/http.ts';
import { drainEarlierEvents, toldEvents } from '../../../test/helpers/events.ts';
import { MailSink, queuedTo, resetTokenIn } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'the original passphrase';
const NEW_PASSWORD = 'a brand new passphrase';

describe('passwords: forgot, reset, change', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), BASE_URL: 'https://id.example.test', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app);
    await drainEarlierEvents(app);
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  async function newUser() {
    const email = uniqueEmail('pw');
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  const forgot = (email: string, headers: Record<string, string> = {}) =>
    call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp(), ...headers },
      body: { email },
    });
  const reset = (token: string, password: string) =>
    call(app, 'POST', '/api/v1/auth/password/reset', { headers: { 'x-forwarded-for': someIp() }, body: { token, password } });

  it('answers forgot the same way whether or not the account exists', async () => {
    const user = await newUser();
    const known = await forgot(user.email);
    const unknown = await forgot(uniqueEmail('nobody'));
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.body).toEqual(unknown.body);
    await mail.waitFor(user.email);
  });

  it('emails a link on BASE_URL, whatever Host or X-Forwarded-Host the request claims', async () => {
    const user = await newUser();
    await forgot(user.email, { 'x-forwarded-host': 'evil.test', 'x-forwarded-proto': 'http' });
    const { link } = resetTokenIn(await mail.waitFor(user.email));
    expect(link.startsWith('https://id.example.test/reset-password?token=')).toBe(true);
    expect(link).not.toContain('evil.test');
  });

  it('holds no database connection while a reset’s or a change’s new password waits for Argon2id', async () => {
    const users = await Promise.all(Array.from({ length: 3 }, () => newUser()));
    const tokens: string[] = [];
    for (const user of users) {
      await forgot(user.email);
      tokens.push(resetTokenIn(await mail.waitFor(user.email)).token);
    }
    const changers = await Promise.all(Array.from({ length: 3 }, async () => signIn(app, ws.id, (await newUser()).email, PASSWORD)));
    // Three resets and three changes, more than the pool has connections, each waiting for a hashing slot.
    const { meanwhile, results } = await whileHashesWait(
      6,
      (i) =>
        i < 3
          ? reset(tokens[i] as string, NEW_PASSWORD)
          : call(app, 'POST', '/api/v1/auth/password/change', {
              token: changers[i - 3]?.accessToken,
              body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
            }),
      () => call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey }),
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const user of users) expect((await login(app, ws.id, user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('holds no database connection while a change checks the current password with Argon2id', async () => {
    const changers = await Promise.all(Array.from({ length: 5 }, async () => signIn(app, ws.id, (await newUser()).email, PASSWORD)));
    // Five changes, more than the pool has connections; each one's first hash goes through, its second waits.
    const { meanwhile, results } = await whileHashesWait(
      5,
      (i) =>
        call(app, 'POST', '/api/v1/auth/password/change', {
          token: changers[i]?.accessToken,
          headers: { 'x-forwarded-for': someIp() },
          body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
        }),
      () => call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey }),
      { after: 5 },
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it('refuses a change whose current password was replaced while it was being checked, and keeps the replacement', async () => {
    const user = await newUser();
    const { accessToken } = await signIn(app, ws.id, user.email, PASSWORD);
    const REPLACED = 'a password set meanwhile';
    const replacedHash = await hashPassword(REPLACED);
    // The change's first hash (the current password's check) goes through; while its second waits, another
    // write (a reset, an admin's import) replaces the password.
    const { results } = await whileHashesWait(
      1,
      () =>
        call(app, 'POST', '/api/v1/auth/password/change', {
          token: accessToken,
          headers: { 'x-forwarded-for': someIp() },
          body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
        }),
      () => app.deps.orm.em.getConnection().execute('update users set password_hash = ? where id = ?', [replacedHash, user.id]),
      { after: 1 },
    );
    expect([results[0]?.status, results[0]?.body.error?.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    expect((await login(app, ws.id, user.email, NEW_PASSWORD)).status).toBe(401);
    expect((await login(app, ws.id, user.email, REPLACED)).status).toBe(200);
  });

  it('a reset ends every session of the user, each told as session.revoked with reason password_reset', async () => {
    const user = await newUser();
    const sessions = [await signIn(app, ws.id, user.email, PASSWORD), await signIn(app, ws.id, user.email, PASSWORD)];
    await forgot(user.email);
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    expect((await reset(token, NEW_PASSWORD)).status).toBe(200);
    const rows = await toldEvents(app, ws.id, 'session.revoked', user.id);
    expect(rows).toEqual(
      expect.arrayContaining(
        sessions.map((s) => ({ session_id: s.sessionId, user_id: user.id, client_id: null, reason: 'password_reset' })),
      ),
    );
    expect(rows).toHaveLength(2);
  });

  it('sends at most one reset email per address per minute', async () => {
    const user = await newUser();
    await forgot(user.email);
    await mail.waitFor(user.email);
    expect((await forgot(user.email)).status).toBe(200);
    expect(await queuedTo(app, user.email)).toBe(1);
    await app.deps.mailer.tick();
    expect(mail.to(user.email)).toHaveLength(1);
    app.clock.advance(61 * 1000);
    await forgot(user.email);
    await mail.waitFor(user.email, 1);
  });

  it("a reset lifts a lockout after failed sign-ins (user.updated tells so), not an admin's lock", async () => {
    const failed = await newUser();
    for (let i = 0; i < 10; i++) await login(app, ws.id, failed.email, `wrong ${i} password`, someIp());
    const locked = await newUser();
    await call(app, 'PATCH', `/api/v1/users/${locked.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    // Every event so far is fanned out before the endpoint exists: it gets only what the resets emit.
    await app.deps.webhooks.tick();
    const hook = await call(app, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url: 'http://127.0.0.1:9/hooks', event_types: ['user.updated'] },
    });
    for (const user of [failed, locked]) {
      expect((await login(app, ws.id, user.email, PASSWORD, someIp())).body.error.code).toBe('ACCOUNT_LOCKED');
      await forgot(user.email);
      expect((await reset(resetTokenIn(await mail.waitFor(user.email)).token, NEW_PASSWORD)).status).toBe(200);
    }
    await app.deps.webhooks.tick();
    const told = await call(app, 'GET', `/api/v1/webhooks/${hook.body.data.id}/deliveries`, { token: ws.apiKey });
    expect(told.body.data.map((d: { event_type: string }) => d.event_type)).toEqual(['user.updated']);
    await call(app, 'DELETE', `/api/v1/webhooks/${hook.body.data.id}`, { token: ws.apiKey });
    expect((await login(app, ws.id, failed.email, NEW_PASSWORD, someIp())).status).toBe(200);
    expect((await login(app, ws.id, locked.email, NEW_PASSWORD, someIp())).body.error.code).toBe('ACCOUNT_LOCKED');
  });

  it('records a reset request refused for its body as a failed attempt, with the address it named', async () => {
    const malformed = `not-an-address-${Date.now()}`;
    const res = await forgot(malformed);
    expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const rows = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.password_forgot&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    const row = rows.body.data.find((e: { request_id: string }) => e.request_id === res.headers.get('x-request-id'));
    expect(row).toMatchObject({ actor: { type: 'system', id: null }, details: { reason: 'invalid_request', email: malformed } });
  });

  it('sends one reset email when requests for one address arrive together', async () => {
    const user = await newUser();
    const answers = await Promise.all(Array.from({ length: 8 }, () => forgot(user.email)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    await mail.waitFor(user.email);
    expect(await queuedTo(app, user.email)).toBe(1);
    await app.deps.mailer.tick();
    expect(mail.to(user.email)).toHaveLength(1);
  });

  it('resets once: the new password works, the old does not, every session ends, a lock lifts', async () => {
    const user = await newUser();
    const session = await signIn(app, ws.id, user.email, PASSWORD);
    for (let i = 0; i < 10; i++) await login(app, ws.id, user.email, `wrong ${i} password`);
    await forgot(user.email);
    const { token } = resetTokenIn(await mail.waitFor(user.email));

    const weak = await reset(token, 'seven77');
    expect([weak.status, weak.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(weak.body.error.details[0].path).toBe('password');

    const done = await reset(token, NEW_PASSWORD);
    expect(done.status).toBe(200);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: session.accessToken })).status).toBe(401);
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(401);
    expect((await login(app, ws.id, user.email, NEW_PASSWORD)).status).toBe(200);
    const again = await reset(token, 'yet another passphrase');
    expect([again.status, again.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const audited = await call(app, 'GET', `/api/v1/audit/events/?event_type=auth.password_reset&target_id=${user.id}`, {
      token: ws.apiKey,
    });
    expect(audited.body.data.map((e: { outcome: string; details: { reason?: string } }) => [e.outcome, e.details.reason ?? null])).toEqual([
      ['failure', 'token_used'],
      ['success', null],
    ]);
  });

  it('retires every other reset link once the password changes, by a reset or by a change', async () => {
    const user = await newUser();
    await forgot(user.email);
    const first = resetTokenIn(await mail.waitFor(user.email)).token;
    app.clock.advance(61 * 1000);
    await forgot(user.email);
    const second = resetTokenIn(await mail.waitFor(user.email, 1)).token;
    expect((await reset(second, NEW_PASSWORD)).status).toBe(200);
    const stale = await reset(first, 'an attacker passphrase');
    expect([stale.status, stale.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    app.clock.advance(61 * 1000);
    await forgot(user.email);
    const third = resetTokenIn(await mail.waitFor(user.email, 2)).token;
    const session = await signIn(app, ws.id, user.email, NEW_PASSWORD);
    const changed = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: session.accessToken,
      body: { current_password: NEW_PASSWORD, new_password: PASSWORD },
    });
    expect(changed.status).toBe(200);
    expect((await reset(third, 'an attacker passphrase')).status).toBe(401);
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
  });

  it("retires the reset links sent to the old address when an admin changes the user's email", async () => {
    const user = await newUser();
    await forgot(user.email);
    const sentToOld = resetTokenIn(await mail.waitFor(user.email)).token;
    const email = uniqueEmail('moved');
    const moved = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { email } });
    expect([moved.status, moved.body.data.email]).toEqual([200, email]);
    const stale = await reset(sentToOld, 'an attacker passphrase');
    expect([stale.status, stale.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await login(app, ws.id, email, 'an attacker passphrase')).status).toBe(401);
    // A link sent to the new address works.
    app.clock.advance(61 * 1000);
    await forgot(email);
    expect((await reset(resetTokenIn(await mail.waitFor(email)).token, NEW_PASSWORD)).status).toBe(200);
    expect((await login(app, ws.id, email, NEW_PASSWORD)).status).toBe(200);
  });

  it('retires the reset links sent before an admin deactivates or locks the account: reactivated or unlocked, they stay dead', async () => {
    const deactivated = await newUser();
    await forgot(deactivated.email);
    const beforeDeactivation = resetTokenIn(await mail.waitFor(deactivated.email)).token;
    await call(app, 'PATCH', `/api/v1/users/${deactivated.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    await call(app, 'PATCH', `/api/v1/users/${deactivated.id}`, { token: ws.apiKey, body: { status: 'active' } });
    const afterReactivation = await reset(beforeDeactivation, 'an attacker passphrase');
    expect([afterReactivation.status, afterReactivation.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await login(app, ws.id, deactivated.email, PASSWORD)).status).toBe(200);

    const locked = await newUser();
    await forgot(locked.email);
    const beforeLock = resetTokenIn(await mail.waitFor(locked.email)).token;
    await call(app, 'PATCH', `/api/v1/users/${locked.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    const duringLock = await reset(beforeLock, 'an attacker passphrase');
    expect([duringLock.status, duringLock.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    await call(app, 'PATCH', `/api/v1/users/${locked.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect((await login(app, ws.id, locked.email, 'an attacker passphrase')).status).toBe(401);
    expect((await login(app, ws.id, locked.email, PASSWORD)).status).toBe(200);
  });

  it('refuses a reset token presented with another workspace in X-Tenant-ID, without spending it', async () => {
    const user = await newUser();
    const other = await createWorkspace(app);
    await forgot(user.email);
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    const send = (tenant: string) =>
      call(app, 'POST', '/api/v1/auth/password/reset', {
        headers: { 'x-tenant-id': tenant, 'x-forwarded-for': someIp() },
        body: { token, password: NEW_PASSWORD },
      });
    const foreign = await send(other.id);
    expect([foreign.status, foreign.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await send(ws.id)).status).toBe(200);
  });

  it('lets exactly one of 20 concurrent resets with one token succeed', async () => {
    const user = await newUser();
    await forgot(user.email);
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => reset(token, `concurrent passphrase ${i}`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 401 && r.body.error.code === 'INVALID_TOKEN')).toHaveLength(19);
  });

  it('expires reset links after 30 minutes', async () => {
    const user = await newUser();
    await forgot(user.email);
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    app.clock.advance(31 * 60 * 1000);
    const res = await reset(token, NEW_PASSWORD);
    expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('changes a password: wrong current is refused, the current session stays, the others end', async () => {
    const user = await newUser();
    const here = await signIn(app, ws.id, user.email, PASSWORD);
    const elsewhere = await signIn(app, ws.id, user.email, PASSWORD);
    const change = (body: object) =>
      call(app, 'POST', '/api/v1/auth/password/change', { token: here.accessToken, headers: { 'x-forwarded-for': someIp() }, body });

    const wrong = await change({ current_password: 'not it at all', new_password: NEW_PASSWORD });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const short = await change({ current_password: PASSWORD, new_password: 'short' });
    expect([short.status, short.body.error.code]).toEqual([400, 'BAD_REQUEST']);

    const ok = await change({ current_password: PASSWORD, new_password: NEW_PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.body.data).toEqual({ password_changed: true, ended_sessions: 1 });
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: here.accessToken })).status).toBe(200);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: elsewhere.accessToken })).status).toBe(401);
    expect((await login(app, ws.id, user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('counts a wrong current password toward the lockout, and changes nothing while locked', async () => {
    const user = await newUser();
    const here = await signIn(app, ws.id, user.email, PASSWORD);
    const change = (current_password: string) =>
      call(app, 'POST', '/api/v1/auth/password/change', {
        token: here.accessToken,
        headers: { 'x-forwarded-for': someIp() },
        body: { current_password, new_password: NEW_PASSWORD },
      });

    for (let i = 0; i < 9; i++) expect((await change(`wrong guess ${i}`)).body.error.code).toBe('INVALID_CREDENTIALS');
    // A right password breaks the run: nine failures, then a success, leave the count at zero.
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await change(`wrong guess ${i}`)).status).toBe(401);
    const tenth = await change('the tenth guess');
    expect([tenth.status, tenth.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);

    const right = await change(PASSWORD);
    expect([right.status, right.body.error.code]).toEqual([403, 'ACCOUNT_LOCKED']);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.error.code).toBe('ACCOUNT_LOCKED');
    const read = await call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey });
    expect(read.body.data.status).toBe('locked');
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.password_change&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    const mine = audit.body.data.filter((e: { target: { id: string } | null }) => e.target?.id === user.id);
    expect(mine.map((e: { details: object }) => e.details).slice(0, 2)).toEqual([
      { reason: 'account_locked' },
      { reason: 'wrong_password', account_locked: true },
    ]);

    // The lock's fifteen minutes end (and with them the access token): the password changes again.
    app.clock.advance(15 * 60 * 1000 + 1000);
    const later = await signIn(app, ws.id, user.email, PASSWORD);
    const after = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: later.accessToken,
      headers: { 'x-forwarded-for': someIp() },
      body: { current_password: PASSWORD, new_password: NEW_PASSWORD },
    });
    expect(after.status).toBe(200);
    expect((await login(app, ws.id, user.email, NEW_PASSWORD)).status).toBe(200);
  });

  it('takes any password of 8 to 128 characters by default, common ones included (the spec rule)', async () => {
    for (const password of ['12345678', 'password123']) {
      const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail(), password } });
      expect(res.status).toBe(201);
    }
    const owner = { email: uniqueEmail('owner'), password: 'password' };
    const created = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name: 'Plain', owner } });
    expect(created.status).toBe(201);
  });

  it('limits /password/* to 10 a minute per IP', async () => {
    const ip = someIp();
    for (let i = 0; i < 10; i++) {
      const res = await call(app, 'POST', '/api/v1/auth/password/reset', {
        headers: { 'x-forwarded-for': ip },
        body: { token: 'nope', password: NEW_PASSWORD },
      });
      expect(res.status).toBe(401);
    }
    const limited = await call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': ip },
      body: { email: 'a@b.co' },
    });
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.password_forgot&outcome=failure', { token: ws.apiKey });
    expect(audit.body.data.filter((e: { ip: string }) => e.ip === ip)).toEqual([
      expect.objectContaining({ details: { reason: 'rate_limited', email: 'a@b.co', limit: 10, window_seconds: 60 } }),
    ]);
  });

  it('counts password changes per IP before the credential is checked', async () => {
    const ip = someIp();
    const body = { current_password: PASSWORD, new_password: NEW_PASSWORD };
    for (let i = 0; i < 10; i++) {
      const res = await call(app, 'POST', '/api/v1/auth/password/change', {
        token: 'not-a-token',
        headers: { 'x-forwarded-for': ip },
        body,
      });
      expect(res.status).toBe(401);
    }
    const limited = await call(app, 'POST', '/api/v1/auth/password/change', { headers: { 'x-forwarded-for': ip }, body });
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
  });
});

/**
 * A second app with the blocklist on. Its own describe, after the first app is closed: the embedded
 * database takes one connection at a time.
 */
describe('passwords with REJECT_COMMON_PASSWORDS', () => {
  it('with REJECT_COMMON_PASSWORDS, refuses common passwords with a clear 400 wherever a password is set', async () => {
    const strict = await startTestApp({ REJECT_COMMON_PASSWORDS: 'true' });
    try {
      const sws = await createWorkspace(strict);
      const refused = (res: { status: number; body: { error: { code: string; details: unknown[] } } }, path: string) => {
        expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
        expect(res.body.error.details).toEqual([{ path, message: expect.stringContaining('commonly used') }]);
      };
      refused(
        await call(strict, 'POST', '/api/v1/users', { token: sws.apiKey, body: { email: uniqueEmail(), password: 'Password1' } }),
        'password',
      );
      const owner = { email: uniqueEmail('owner'), password: 'password123' };
      refused(
        await call(strict, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name: 'Weak', owner } }),
        'owner.password',
      );
      refused(await call(strict, 'POST', '/api/v1/auth/password/reset', { body: { token: 'nope', password: 'qwerty123' } }), 'password');
      refused(await call(strict, 'POST', '/api/v1/invitations/accept', { body: { token: 'nope', password: 'iloveyou' } }), 'password');
      const session = await signIn(strict, sws.id, sws.owner.email, sws.owner.password);
      const change = await call(strict, 'POST', '/api/v1/auth/password/change', {
        token: session.accessToken,
        body: { current_password: sws.owner.password, new_password: 'letmein123' },
      });
      refused(change, 'new_password');
      const fine = await call(strict, 'POST', '/api/v1/users', { token: sws.apiKey, body: { email: uniqueEmail(), password: PASSWORD } });
      expect(fine.status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
