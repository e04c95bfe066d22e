import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, signIn, someIp } from './helpers/auth.ts';
import { Browser, formAction } from './helpers/browser.ts';
import { basicAuth, call } from './helpers/http.ts';
import { linkTokenIn, MailSink, resetTokenIn } from './helpers/mail-sink.ts';
import { copies, releaseTogether, type RaceRequest, type RaceResponse } from './helpers/race.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';
import { authenticatorOf, codeAt } from './helpers/authenticator.ts';

/**
 * Twenty identical requests released together (each on its own connection, completed by their last
 * byte in one loop: helpers/race.ts), for every single-use credential and for the last owner: exactly
 * one succeeds, the others get the exact refusal, and the end state is the one the design promises.
 */
const N = 20;
const PASSWORD = 'race condition passphrase';
const CALLBACK = 'https://rp.example.com/race/callback';

const json = (body: object): Pick<RaceRequest, 'headers' | 'body'> => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Status and error code of each answer, sorted, for one comparison. */
function outcomes(results: RaceResponse[]): string[] {
  return results.map((r) => (r.status < 300 ? String(r.status) : `${r.status} ${r.json?.error?.code ?? r.json?.error}`)).sort();
}

describe(`races: ${N} identical requests at once`, () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start() });
    ws = await createWorkspace(app, 'Races');
  });
  afterAll(async () => {
    await app?.close();
    await mail.stop();
  });

  async function newUser(label = 'racer') {
    const email = uniqueEmail(label);
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return { email, id: res.body.data.id as string };
  }

  const sql = <T>(text: string, params: unknown[]) => app.deps.orm.em.fork().getConnection().execute<T[]>(text, params);

  it('refresh token: one rotation; the others are reuse, which ends the session', async () => {
    const user = await newUser();
    const session = await signIn(app, ws.id, user.email, PASSWORD);
    const results = await releaseTogether(
      app.url,
      copies(N, { method: 'POST', path: '/api/v1/auth/refresh', ...json({ refresh_token: session.refreshToken }) }),
    );
    expect(outcomes(results)).toEqual(['200', ...Array<string>(N - 1).fill('401 INVALID_TOKEN')]);
    // A loser presented a token already used: reuse detection ends the whole session, the winner's
    // fresh tokens included (CONTRACT: reuse ends the session). Nothing is left half-rotated.
    const winner = results.find((r) => r.status === 200)?.json.data;
    const [ended] = await sql<{ end_reason: string | null; live_tokens: string }>(
      `select s.end_reason, (select count(*) from refresh_tokens t where t.session_id = s.id and t.used_at is null) as live_tokens
         from sessions s where s.id = ?`,
      [session.sessionId],
    );
    expect(ended?.end_reason).toBe('refresh_token_reuse');
    expect(Number(ended?.live_tokens)).toBe(1);
    const reuse = await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: winner.refresh_token } });
    expect([reuse.status, reuse.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('reset token: one new password; the others 401 INVALID_TOKEN', async () => {
    const user = await newUser();
    const session = await signIn(app, ws.id, user.email, PASSWORD);
    await call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
      body: { email: user.email },
    });
    const { token } = resetTokenIn(await mail.waitFor(user.email));
    const requests = Array.from({ length: N }, (_, i) => ({
      method: 'POST',
      path: '/api/v1/auth/password/reset',
      ...json({ token, password: `winning passphrase ${i}` }),
      headers: { 'content-type': 'application/json', 'x-forwarded-for': someIp() },
    }));
    const results = await releaseTogether(app.url, requests);
    expect(outcomes(results)).toEqual(['200', ...Array<string>(N - 1).fill('401 INVALID_TOKEN')]);
    // Exactly the winner's password works; every session of the user ended with the reset.
    const winnerIndex = results.findIndex((r) => r.status === 200);
    expect((await login(app, ws.id, user.email, `winning passphrase ${winnerIndex}`)).status).toBe(200);
    const other = (winnerIndex + 1) % N;
    expect((await login(app, ws.id, user.email, `winning passphrase ${other}`)).status).toBe(401);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: session.accessToken })).status).toBe(401);
    const [used] = await sql<{ unused: string }>(
      'select count(*) as unused from password_reset_tokens where user_id = ? and used_at is null',
      [user.id],
    );
    expect(Number(used?.unused)).toBe(0);
  });

  it('mfa_token + code: one session; the others find the token or the step used, or the per-user limit', async () => {
    const user = await newUser();
    const { accessToken } = await signIn(app, ws.id, user.email, PASSWORD);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const stepStart = () => {
      const now = app.clock.now().getTime();
      app.clock.set(new Date(now - (now % 30_000) + 30_000 + 5_000));
    };
    stepStart();
    const code = () => codeAt(totp, app.clock);
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: accessToken,
      body: { code: code() },
    });
    expect(verified.status).toBe(200);
    stepStart();
    const challenge = (await login(app, ws.id, user.email, PASSWORD)).body.data;
    expect(challenge.mfa_required).toBe(true);
    const [before] = await sql<{ n: string }>('select count(*) as n from sessions where user_id = ?', [user.id]);

    const results = await releaseTogether(
      app.url,
      copies(N, { method: 'POST', path: '/api/v1/auth/mfa/verify', ...json({ mfa_token: challenge.mfa_token, code: code() }) }),
    );
    const got = outcomes(results);
    console.info(`mfa_token race: ${got.join(', ')}`);
    expect(got.filter((o) => o === '200')).toHaveLength(1);
    // A loser finds the mfa_token used (INVALID_TOKEN, before the limit is counted), or passes the
    // limit and finds the code's time step spent (INVALID_CODE), or is past the user's 5 attempts.
    for (const o of got.filter((x) => x !== '200')) expect(['401 INVALID_TOKEN', '401 INVALID_CODE', '429 RATE_LIMITED']).toContain(o);
    // The limit holds under the race: at most 5 attempts reached the code check.
    expect(got.filter((o) => o === '200' || o === '401 INVALID_CODE').length).toBeLessThanOrEqual(5);
    const [after] = await sql<{ n: string }>('select count(*) as n from sessions where user_id = ?', [user.id]);
    expect(Number(after?.n) - Number(before?.n)).toBe(1);
    const [challengeRow] = await sql<{ used_at: Date | null }>(
      'select used_at from mfa_challenges where user_id = ? order by created_at desc limit 1',
      [user.id],
    );
    expect(challengeRow?.used_at).not.toBeNull();
  });

  it('invitation accept: one user created and signed in; the others 401 INVALID_TOKEN', async () => {
    const email = uniqueEmail('invitee');
    const invited = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } });
    expect(invited.status).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const results = await releaseTogether(
      app.url,
      copies(N, { method: 'POST', path: '/api/v1/invitations/accept', ...json({ token, password: PASSWORD }) }),
    );
    expect(outcomes(results)).toEqual(['200', ...Array<string>(N - 1).fill('401 INVALID_TOKEN')]);
    const [users] = await sql<{ n: string }>('select count(*) as n from users where workspace_id = ? and email = ?', [ws.id, email]);
    expect(Number(users?.n)).toBe(1);
    const invitation = await call(app, 'GET', '/api/v1/invitations?status=accepted&per_page=100', { token: ws.apiKey });
    expect(invitation.body.data.filter((i: { id: string }) => i.id === invited.body.data.id)).toHaveLength(1);
  });

  it('authorization code: one token response; the others invalid_grant, which revokes what the code gave', async () => {
    const user = await newUser('rp-user');
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Race RP', type: 'web', redirect_uris: [CALLBACK] },
    });
    const client = { id: created.body.data.id as string, secret: created.body.data.client_secret as string };
    const verifier = oidc.randomPKCECodeVerifier();
    const params = new URLSearchParams({
      client_id: client.id,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
    });
    const browser = new Browser(app.url);
    const page = await browser.go(`${app.url}/oauth/authorize?${params.toString()}`);
    const done = await browser.go(formAction(page.body, 'Sign in'), { email: user.email, password: PASSWORD });
    const code = new URL(done.location as string).searchParams.get('code') as string;
    expect(code).toBeTruthy();

    const basic = basicAuth(client.id, client.secret);
    const results = await releaseTogether(
      app.url,
      copies(N, {
        method: 'POST',
        path: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: verifier }).toString(),
      }),
    );
    expect(outcomes(results)).toEqual(['200', ...Array<string>(N - 1).fill('400 invalid_grant')]);
    // A second use of a code is a replay (RFC 6749 §4.1.2): the grant is revoked, the winner's token too.
    const winner = results.find((r) => r.status === 200)?.json;
    const introspected = await fetch(`${app.url}/oauth/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic, 'x-forwarded-for': someIp() },
      body: new URLSearchParams({ token: winner.access_token }).toString(),
    });
    expect((await introspected.json()).active).toBe(false);
  });

  it('last owner: two owners demoting each other ten times each, one wins and one owner stays', async () => {
    const fresh = await createWorkspace(app, 'Two owners');
    const roles = await call(app, 'GET', '/api/v1/roles', { token: fresh.apiKey });
    const ownerRole = roles.body.data.find((r: { key: string }) => r.key === 'owner').id as string;
    const first = await signIn(app, fresh.id, fresh.owner.email, fresh.owner.password);
    const secondEmail = uniqueEmail('co-owner');
    const second = await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email: secondEmail, password: PASSWORD } });
    const secondId = second.body.data.id as string;
    const granted = await call(app, 'POST', '/api/v1/roles/assign', {
      token: first.accessToken,
      body: { user_id: secondId, role_id: ownerRole },
    });
    expect(granted.status).toBe(201);
    const secondToken = (await signIn(app, fresh.id, secondEmail, PASSWORD)).accessToken;

    const revoke = (token: string, userId: string): RaceRequest => ({
      method: 'POST',
      path: '/api/v1/roles/revoke',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-forwarded-for': someIp() },
      body: JSON.stringify({ user_id: userId, role_id: ownerRole }),
    });
    const requests = Array.from({ length: N }, (_, i) =>
      i % 2 === 0 ? revoke(first.accessToken, secondId) : revoke(secondToken, fresh.owner.id),
    );
    const results = await releaseTogether(app.url, requests);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const winnerIndex = results.findIndex((r) => r.status === 200);
    const demoted = winnerIndex % 2 === 0 ? secondId : fresh.owner.id;
    results.forEach((r, i) => {
      if (i === winnerIndex) return;
      const outcome = `${r.status} ${r.json.error.code}`;
      if (i % 2 === winnerIndex % 2) {
        // The winner's own direction again: the assignment is gone.
        expect(outcome, `request ${i}`).toBe('404 NOT_FOUND');
      } else {
        // The other direction: 409 when it was authorized while both were owners and then found the
        // last owner under the lock, 403 when it was authorized after its sender lost the role.
        expect(['409 CONFLICT', '403 FORBIDDEN'], `request ${i}`).toContain(outcome);
      }
    });
    const owners = await sql<{ user_id: string }>(
      'select ra.user_id from role_assignments ra join roles r on r.id = ra.role_id where r.workspace_id = ? and r.key = ?',
      [fresh.id, 'owner'],
    );
    expect(owners.map((o) => o.user_id)).toEqual([demoted === secondId ? fresh.owner.id : secondId]);
  });

  it('role assignment: the same (user, role) at once is one 201 (the grant) and 200 for the others, as one after another is; one assignment stays', async () => {
    const user = await newUser('assignee');
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: `Racers ${user.id}`, permissions: ['users:read'] },
    });
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const results = await releaseTogether(
      app.url,
      copies(N, {
        method: 'POST',
        path: '/api/v1/roles/assign',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ws.apiKey}` },
        body: JSON.stringify({ user_id: user.id, role_id: role.body.data.id, expires_at: expiresAt }),
      }),
    );
    expect(outcomes(results)).toEqual([...Array<string>(N - 1).fill('200'), '201']);
    for (const r of results) expect(r.json.data).toMatchObject({ user_id: user.id, role_id: role.body.data.id, expires_at: expiresAt });
    const held = await sql<{ expires_at: string }>('select expires_at from role_assignments where user_id = ? and role_id = ?', [
      user.id,
      role.body.data.id,
    ]);
    expect(held.map((a) => new Date(a.expires_at).toISOString())).toEqual([expiresAt]);
  });

  it('TOTP enrollment: every one is 201, and the oldest pending factors make room, so at most 5 stay pending and 20 in all', async () => {
    const user = await newUser('enroller');
    const { accessToken } = await signIn(app, ws.id, user.email, PASSWORD);
    const enrollAll = () =>
      releaseTogether(
        app.url,
        copies(N, {
          method: 'POST',
          path: '/api/v1/mfa/factors/totp',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
          body: JSON.stringify({ name: 'Phone' }),
        }),
      );
    const factorsOf = () => sql<{ id: string; status: string }>('select id, status from mfa_factors where user_id = ?', [user.id]);
    const first = await enrollAll();
    expect(outcomes(first)).toEqual(Array<string>(N).fill('201'));
    const pending = await factorsOf();
    expect(pending.map((f) => f.status)).toEqual(Array<string>(5).fill('Pending verification'));
    const enrolled = first.map((r) => r.json.data.factor.id as string);
    expect(enrolled).toEqual(expect.arrayContaining(pending.map((f) => f.id)));
    const replaced = await sql<{ target_id: string; details: { replaced_by: string } }>(
      `select target_id, details from audit_events where event_type = 'mfa.factor_remove' and actor_id = ?`,
      [user.id],
    );
    expect(replaced.map((r) => r.target_id).sort()).toEqual(enrolled.filter((id) => !pending.some((f) => f.id === id)).sort());
    expect(enrolled).toEqual(expect.arrayContaining(replaced.map((r) => r.details.replaced_by)));

    // 17 verified (marked so in the table, as the code checks are not what is raced here): now the
    // total, not the pending count, is what binds.
    const verifyAll = () => sql('update mfa_factors set status = ? where user_id = ?', ['Verified', user.id]);
    await verifyAll();
    for (let i = 0; i < 12; i++) {
      expect((await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'More' } })).status).toBe(201);
      await verifyAll();
    }
    expect((await factorsOf()).length).toBe(17);
    expect(outcomes(await enrollAll())).toEqual(Array<string>(N).fill('201'));
    const held = await factorsOf();
    expect(held.filter((f) => f.status === 'Pending verification').length).toBe(3);
    expect(held.length).toBe(20);
  });

  it('TOTP enrollment beside the verification of the pending factor it would replace: a factor answered Verified is never removed', async () => {
    const user = await newUser('verifier');
    const { accessToken } = await signIn(app, ws.id, user.email, PASSWORD);
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` };
    const enroll = async () =>
      (await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } })).body.data;
    const verifiedWon: string[] = [];
    for (let round = 0; round < 10; round++) {
      const oldest = await enroll();
      for (let i = 0; i < 4; i++) await enroll();
      const code = codeAt(authenticatorOf(oldest.otpauth_uri), app.clock);
      const [verify, enrolled] = await releaseTogether(app.url, [
        { method: 'POST', path: `/api/v1/mfa/factors/${oldest.factor.id}/verify`, headers: auth, body: JSON.stringify({ code }) },
        { method: 'POST', path: '/api/v1/mfa/factors/totp', headers: auth, body: JSON.stringify({ name: 'Phone' }) },
      ]);
      expect(enrolled?.status).toBe(201);
      const [row] = await sql<{ status: string }>('select status from mfa_factors where id = ?', [oldest.factor.id]);
      if (verify?.status === 200) {
        expect(row?.status).toBe('Verified');
        verifiedWon.push(oldest.factor.id);
      } else {
        expect([verify?.status, verify?.json.error.code, row]).toEqual([404, 'NOT_FOUND', undefined]);
      }
      await sql(`delete from mfa_factors where user_id = ? and status = 'Pending verification'`, [user.id]);
    }
    console.info(`verify beside enroll: verification won ${verifiedWon.length} of 10`);
  });
});
