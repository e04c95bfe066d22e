import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../audit/audit.entity.ts';
import { hashPassword } from '../../core/passwords.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, someIp } from '../../../test/helpers/auth.ts';
import { whileHashesWait } from '../../../test/helpers/hashing.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'a sturdy passphrase';

describe('POST /api/v1/auth/login', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function newUser(label = 'user') {
    const email = uniqueEmail(label);
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  async function auditFor(userEmail: string) {
    const em = app.deps.orm.em.fork();
    const events = await em.find(
      AuditEvent,
      { eventType: 'auth.login' },
      { filters: { tenant: { workspaceId: ws.id } }, orderBy: { id: 'asc' } },
    );
    return events.filter((e) => e.details.email === userEmail);
  }

  it('answers tokens and the user; the access token is a JWT the JWKS verifies, with the CONTRACT claims', async () => {
    const res = await login(app, ws.id, ws.owner.email, ws.owner.password);
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ token_type: 'Bearer', expires_in: 900, user: { id: ws.owner.id, email: ws.owner.email } });
    expect(data.refresh_token).toMatch(/^rt_/);
    const header = decodeProtectedHeader(data.access_token);
    const claims = decodeJwt(data.access_token);
    expect(claims).toMatchObject({ sub: ws.owner.id, tid: ws.id, roles: ['owner'], iss: app.deps.config.BASE_URL });
    expect(claims.sid).toMatch(/^ses_/);
    expect(typeof claims.jti).toBe('string');
    expect((claims.exp as number) - (claims.iat as number)).toBe(900);
    const jwks = await call(app, 'GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toContain(header.kid);
    expect(JSON.stringify(jwks.body)).not.toMatch(/"d"/);
    // What a resource server does with the published keys alone.
    const verified = await jwtVerify(data.access_token, createLocalJWKSet(jwks.body), {
      issuer: app.deps.config.BASE_URL,
      algorithms: ['EdDSA'],
      typ: 'at+jwt',
    });
    expect(verified.protectedHeader).toEqual({ alg: 'EdDSA', kid: header.kid, typ: 'at+jwt' });
    expect(verified.payload).toEqual(claims);

    const me = await call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: data.access_token });
    expect(me.status).toBe(200);
    expect(me.body.data.last_sign_in_at).not.toBeNull();
  });

  it('gives an unknown email and a wrong password the same status, code and message', async () => {
    const user = await newUser('enum');
    const unknown = await login(app, ws.id, uniqueEmail('nobody'), PASSWORD);
    const wrong = await login(app, ws.id, user.email, 'not the password at all');
    for (const res of [unknown, wrong]) {
      expect(res.status).toBe(401);
      expect(res.body.error).toEqual({ code: 'INVALID_CREDENTIALS', message: 'The provided credentials are incorrect' });
    }
    const strip = (body: { meta: unknown }) => ({ ...body, meta: null });
    expect(strip(unknown.body)).toEqual(strip(wrong.body));
    expect([...unknown.headers.keys()].sort()).toEqual([...wrong.headers.keys()].sort());
  });

  it('records every attempt in the audit log with its reason', async () => {
    const user = await newUser('audited');
    await login(app, ws.id, user.email, 'wrong wrong wrong');
    await login(app, ws.id, user.email, PASSWORD);
    const events = await auditFor(user.email);
    expect(events.map((e) => [e.outcome, e.details.reason])).toEqual([
      ['failure', 'wrong_password'],
      ['success', undefined],
    ]);
    expect(events[1]?.targetId).toBe(user.id);
  });

  it('refuses a deactivated account with ACCOUNT_DEACTIVATED only after the password is right', async () => {
    const user = await newUser('gone');
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    const wrong = await login(app, ws.id, user.email, 'not the password');
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_CREDENTIALS']);
    const right = await login(app, ws.id, user.email, PASSWORD);
    expect([right.status, right.body.error.code]).toEqual([403, 'ACCOUNT_DEACTIVATED']);
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
  });

  it('locks after 10 consecutive failures for 15 minutes, ACCOUNT_LOCKED only with the right password', async () => {
    const user = await newUser('locked');
    for (let i = 0; i < 9; i++) expect((await login(app, ws.id, user.email, `wrong ${i} password`)).status).toBe(401);
    // A success before the tenth resets the count.
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await login(app, ws.id, user.email, `wrong ${i} password`)).status).toBe(401);
    // The tenth failure's audit row, and only it, says that it locked the account.
    const failures = (await auditFor(user.email)).filter((e) => e.outcome === 'failure');
    expect(failures.map((e) => e.details.account_locked ?? false)).toEqual([...Array<boolean>(18).fill(false), true]);

    const locked = await login(app, ws.id, user.email, PASSWORD);
    expect([locked.status, locked.body.error.code]).toEqual([403, 'ACCOUNT_LOCKED']);
    const stillWrong = await login(app, ws.id, user.email, 'wrong again');
    expect(stillWrong.body.error.code).toBe('INVALID_CREDENTIALS');
    const listed = await call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey });
    expect(listed.body.data.status).toBe('locked');

    app.clock.advance(14 * 60 * 1000);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.error.code).toBe('ACCOUNT_LOCKED');
    app.clock.advance(61 * 1000);
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
  });

  it('shows a lock from failed sign-ins as over once it is, before anyone signs in again', async () => {
    const user = await newUser('lapsed');
    const admin = await newUser('admin-locked');
    await call(app, 'PATCH', `/api/v1/users/${admin.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    for (let i = 0; i < 10; i++) await login(app, ws.id, user.email, `wrong ${i} password`);
    const read = async () => {
      const one = await call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey });
      const ids = async (status: string) =>
        (await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(user.email)}&status=${status}`, { token: ws.apiKey })).body.data.map(
          (u: { id: string }) => u.id,
        );
      return { status: one.body.data.status, locked: await ids('locked'), active: await ids('active') };
    };
    expect(await read()).toEqual({ status: 'locked', locked: [user.id], active: [] });

    app.clock.advance(15 * 60 * 1000 + 1000);
    expect(await read()).toEqual({ status: 'active', locked: [], active: [user.id] });
    const adminLocked = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(admin.email)}&status=locked`, { token: ws.apiKey });
    expect(adminLocked.body.data.map((u: { status: string }) => u.status)).toEqual(['locked']);
  });

  it('lets an admin unlock with PATCH {"status": "active"}', async () => {
    const user = await newUser('unlock');
    for (let i = 0; i < 10; i++) await login(app, ws.id, user.email, `wrong ${i} password`);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.error.code).toBe('ACCOUNT_LOCKED');
    const patched = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect(patched.body.data.status).toBe('active');
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
  });

  it('lets an admin lock with PATCH {"status": "locked"}: refused after the password until unlocked, whatever the time', async () => {
    const user = await newUser('admin-lock');
    const locked = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    expect([locked.status, locked.body.data.status]).toEqual([200, 'locked']);
    const refused = await login(app, ws.id, user.email, PASSWORD);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ACCOUNT_LOCKED']);
    expect(refused.body.error.message).toContain('ask an admin');
    expect((await login(app, ws.id, user.email, 'not the password')).body.error.code).toBe('INVALID_CREDENTIALS');
    // No fifteen minutes here: the lock lasts until an admin lifts it.
    app.clock.advance(24 * 60 * 60 * 1000);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.error.code).toBe('ACCOUNT_LOCKED');
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'active' } });
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
  });

  it('locks an owner only by an owner, never the last one (409); only admins lock; no other workspace', async () => {
    const fresh = await createWorkspace(app);
    const lastOwner = await call(app, 'PATCH', `/api/v1/users/${fresh.owner.id}`, { token: fresh.apiKey, body: { status: 'locked' } });
    expect([lastOwner.status, lastOwner.body.error.code]).toEqual([409, 'CONFLICT']);
    // With a second owner the first is not the last: still, only an owner locks one (an API key acts as admin).
    const ownerToken = (await login(app, fresh.id, fresh.owner.email, fresh.owner.password)).body.data.access_token;
    const roles = await call(app, 'GET', '/api/v1/roles', { token: fresh.apiKey });
    const roleId = (key: string) => roles.body.data.find((r: { key: string }) => r.key === key).id;
    const second = await call(app, 'POST', '/api/v1/users', {
      token: fresh.apiKey,
      body: { email: uniqueEmail('second-owner'), password: PASSWORD },
    });
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ownerToken,
      body: { user_id: second.body.data.id, role_id: roleId('owner') },
    });
    const byKey = await call(app, 'PATCH', `/api/v1/users/${fresh.owner.id}`, { token: fresh.apiKey, body: { status: 'locked' } });
    expect([byKey.status, byKey.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const byOwner = await call(app, 'PATCH', `/api/v1/users/${second.body.data.id}`, { token: ownerToken, body: { status: 'locked' } });
    expect([byOwner.status, byOwner.body.data.status]).toEqual([200, 'locked']);
    // A viewer reads users but locks nobody; another workspace's user is not found.
    const viewerEmail = uniqueEmail('viewer-lock');
    const viewer = await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email: viewerEmail, password: PASSWORD } });
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: fresh.apiKey,
      body: { user_id: viewer.body.data.id, role_id: roleId('viewer') },
    });
    const viewerToken = (await login(app, fresh.id, viewerEmail, PASSWORD)).body.data.access_token;
    const member = await call(app, 'POST', '/api/v1/users', {
      token: fresh.apiKey,
      body: { email: uniqueEmail('member-lock'), password: PASSWORD },
    });
    const byViewer = await call(app, 'PATCH', `/api/v1/users/${member.body.data.id}`, { token: viewerToken, body: { status: 'locked' } });
    expect([byViewer.status, byViewer.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const elsewhere = await call(app, 'PATCH', `/api/v1/users/${member.body.data.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const unchanged = await call(app, 'GET', `/api/v1/users/${member.body.data.id}`, { token: fresh.apiKey });
    expect(unchanged.body.data.status).toBe('active');
    const user = await newUser('deactivated-lock');
    await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    const deactivated = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'locked' } });
    expect([deactivated.status, deactivated.body.error.code]).toEqual([409, 'CONFLICT']);
    // A status the service does not have is a bad request.
    const unknown = await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: ws.apiKey, body: { status: 'suspended' } });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('records a sign-in refused for its body as a failed attempt too, with the address it named', async () => {
    const email = uniqueEmail('malformed');
    for (const body of [{ email }, { email, password: 'a sturdy passphrase', remember: true }, { email, password: 'x'.repeat(129) }]) {
      const res = await call(app, 'POST', '/api/v1/auth/login', { headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() }, body });
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    }
    const rows = await auditFor(email);
    expect(rows.map((r) => [r.outcome, r.details.reason])).toEqual([
      ['failure', 'invalid_request'],
      ['failure', 'invalid_request'],
      ['failure', 'invalid_request'],
    ]);
    // Without a readable address it is recorded all the same.
    const before = await app.deps.orm.em.fork().count(AuditEvent, { eventType: 'auth.login', workspaceId: ws.id }, { filters: false });
    await call(app, 'POST', '/api/v1/auth/login', { headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() }, body: { email: 42 } });
    const after = await app.deps.orm.em.fork().count(AuditEvent, { eventType: 'auth.login', workspaceId: ws.id }, { filters: false });
    expect(after).toBe(before + 1);
  });

  it('answers the 11th attempt in a minute from one IP 429 with Retry-After and RateLimit-*', async () => {
    const ip = someIp();
    for (let i = 0; i < 10; i++) {
      const res = await login(app, ws.id, uniqueEmail('spray'), 'password guess', ip);
      expect(res.status).toBe(401);
    }
    const limited = await login(app, ws.id, ws.owner.email, ws.owner.password, ip);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit-limit')).toBe('10');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect((await login(app, ws.id, uniqueEmail('spray'), 'password guess', ip)).status).toBe(429);
    // Another client is not affected.
    expect((await login(app, ws.id, ws.owner.email, ws.owner.password)).status).toBe(200);
    // The first refusal of the window is audited, once (not each refused request).
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', { token: ws.apiKey });
    const refused = audit.body.data.filter(
      (e: { ip: string; details: { reason?: string } }) => e.ip === ip && e.details.reason === 'rate_limited',
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      actor: { type: 'system', id: null },
      details: { reason: 'rate_limited', email: ws.owner.email, limit: 10, window_seconds: 60 },
      request_id: limited.headers.get('x-request-id'),
    });
  });

  it('records a first refusal in the workspace X-Tenant-ID names, and nowhere when it names none that exists', async () => {
    const other = await createWorkspace(app);
    const rateLimitedRows = async (workspace: TestWorkspace, ip: string) =>
      (
        await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', { token: workspace.apiKey })
      ).body.data.filter((e: { ip: string; details: { reason?: string } }) => e.ip === ip && e.details.reason === 'rate_limited');
    const spend = async (ip: string) => {
      for (let i = 0; i < 10; i++) expect((await login(app, ws.id, uniqueEmail('spray'), 'password guess', ip)).status).toBe(401);
    };

    const toOther = someIp();
    await spend(toOther);
    expect((await login(app, other.id, 'someone@example.com', 'password guess', toOther)).status).toBe(429);
    expect(await rateLimitedRows(other, toOther)).toEqual([
      expect.objectContaining({ details: expect.objectContaining({ email: 'someone@example.com' }) }),
    ]);
    expect(await rateLimitedRows(ws, toOther)).toEqual([]);

    const toNowhere = someIp();
    await spend(toNowhere);
    const unknown = await login(app, 'wsp_00000000000000000000000000', 'someone@example.com', 'password guess', toNowhere);
    expect([unknown.status, unknown.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect((await login(app, ws.id, 'someone@example.com', 'password guess', toNowhere)).status).toBe(429);
    expect(await rateLimitedRows(ws, toNowhere)).toEqual([]);
  });

  it('needs X-Tenant-ID (400), of a real workspace (404), and sign-in is per workspace', async () => {
    const noTenant = await call(app, 'POST', '/api/v1/auth/login', { body: { email: ws.owner.email, password: ws.owner.password } });
    expect([noTenant.status, noTenant.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect((await login(app, 'wsp_00000000000000000000000000', ws.owner.email, ws.owner.password)).status).toBe(404);
    expect((await login(app, 'not-a-workspace', ws.owner.email, ws.owner.password)).status).toBe(404);
    const other = await createWorkspace(app);
    const crossed = await login(app, other.id, ws.owner.email, ws.owner.password);
    expect(crossed.body.error.code).toBe('INVALID_CREDENTIALS');
  });

  it('without X-Tenant-ID takes the workspace of the credential sent; beside the header no credential is read', async () => {
    const user = await newUser('by-credential');
    const other = await createWorkspace(app);
    const as = (token: string, headers: Record<string, string> = {}) =>
      call(app, 'POST', '/api/v1/auth/login', {
        token,
        headers: { 'x-forwarded-for': someIp(), ...headers },
        body: { email: user.email, password: PASSWORD },
      });
    const byKey = await as(ws.apiKey);
    expect([byKey.status, byKey.body.data.user.id]).toEqual([200, user.id]);
    const byToken = await as(byKey.body.data.access_token);
    expect([byToken.status, byToken.body.data.user.id]).toEqual([200, user.id]);
    // Another workspace's key names that workspace, where the user does not exist.
    expect((await as(other.apiKey)).body.error.code).toBe('INVALID_CREDENTIALS');
    const bad = await as('sk_not_a_key');
    expect([bad.status, bad.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // With the header (a sign-in page that still sends a stale or foreign token), the header decides.
    for (const token of ['sk_not_a_key', other.apiKey]) {
      const named = await as(token, { 'x-tenant-id': ws.id });
      expect([named.status, named.body.data?.user.id]).toEqual([200, user.id]);
    }
  });

  it('refuses malformed bodies and over-long passwords with 400 before hashing', async () => {
    for (const body of [
      {},
      { email: 'x@example.com' },
      { email: 'nope', password: 'whatever1' },
      { email: 'x@example.com', password: '' },
    ]) {
      const res = await call(app, 'POST', '/api/v1/auth/login', { headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() }, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const long = await login(app, ws.id, ws.owner.email, 'x'.repeat(129));
    expect([long.status, long.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const huge = await login(app, ws.id, ws.owner.email, 'x'.repeat(1024 * 1024));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('BAD_REQUEST');
  });

  it('compares the whole password: a 128-character password differing only in its last character fails', async () => {
    const email = uniqueEmail('long');
    const password = `${'p'.repeat(127)}a`;
    expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } })).status).toBe(201);
    expect((await login(app, ws.id, email, `${'p'.repeat(127)}b`)).status).toBe(401);
    expect((await login(app, ws.id, email, password)).status).toBe(200);
  });

  it('updates the user in place: on a full page of users, a sign-in keeps the row on its page (no new index entries)', async () => {
    const connection = app.deps.orm.em.getConnection();
    const hash = await hashPassword(PASSWORD);
    const rows = await connection.execute<{ id: string; email: string }[]>(
      `insert into users (id, workspace_id, email, name, status, password_hash, created_at, updated_at, failed_login_count,
                          email_verified, metadata)
       select 'usr_hot' || lpad(n::text, 4, '0') || substr(md5(random()::text), 1, 8), ?, 'hot' || n || '-' || md5(random()::text) || '@example.com',
              'Page Filler ' || n, 'active', ?, now(), now(), 0, false, '{}'::jsonb
         from generate_series(1, 80) n
       returning id, email`,
      [ws.id, hash],
    );
    // A row in the middle of the batch: its page was filled by the rows inserted after it.
    const user = rows[40] as { id: string; email: string };
    const pageOf = async () => {
      const [row] = await connection.execute<{ page: string }[]>('select (ctid::text::point)[0]::text as page from users where id = ?', [
        user.id,
      ]);
      return row?.page;
    };
    const before = await pageOf();
    expect((await login(app, ws.id, user.email, PASSWORD)).status).toBe(200);
    expect(await pageOf()).toBe(before);
  });

  it('holds no database connection while the password waits for Argon2id: other requests are answered meanwhile', async () => {
    const user = await newUser('waiting');
    // More sign-ins waiting for a hashing slot than the pool has connections.
    const { meanwhile, results } = await whileHashesWait(
      6,
      () => login(app, ws.id, user.email, PASSWORD),
      () => call(app, 'GET', `/api/v1/users/${user.id}`, { token: ws.apiKey }),
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual(results.map(() => 200));
  });
});
