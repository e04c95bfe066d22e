import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../audit/audit.entity.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { toldEvents } from '../../../test/helpers/events.ts';

describe('sessions: logout, revoke-all, listing, and who may call what', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const sessions = (token: string) => call(app, 'GET', '/api/v1/auth/sessions', { token });

  it('logout ends the presented session at once and no other', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const b = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const out = await call(app, 'POST', '/api/v1/auth/logout', { token: a.accessToken });
    expect(out.status).toBe(200);
    expect(out.body.data).toEqual({ ended_sessions: 1 });
    expect((await sessions(a.accessToken)).body.error.code).toBe('INVALID_TOKEN');
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: a.refreshToken } })).status).toBe(401);
    expect((await sessions(b.accessToken)).status).toBe(200);
    const em = app.deps.orm.em.fork();
    const audited = await em.find(
      AuditEvent,
      { eventType: 'auth.logout', targetId: a.sessionId },
      { filters: { tenant: { workspaceId: ws.id } } },
    );
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ actorType: 'user', actorId: ws.owner.id, outcome: 'success' });
  });

  it('logout takes the refresh token a client sends along: it ends with the session, its own or another of the caller', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const own = await call(app, 'POST', '/api/v1/auth/logout', { token: a.accessToken, body: { refresh_token: a.refreshToken } });
    expect([own.status, own.body.data]).toEqual([200, { ended_sessions: 1 }]);
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: a.refreshToken } })).status).toBe(401);

    const b = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const c = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const both = await call(app, 'POST', '/api/v1/auth/logout', { token: b.accessToken, body: { refresh_token: c.refreshToken } });
    expect([both.status, both.body.data]).toEqual([200, { ended_sessions: 2 }]);
    expect((await sessions(c.accessToken)).body.error.code).toBe('INVALID_TOKEN');

    // Another user's token, or none that exists, ends nothing but the caller's session (RFC 7009's rule: no error).
    const otherEmail = uniqueEmail('logout');
    expect(
      (await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: otherEmail, password: 'another passphrase' } })).status,
    ).toBe(201);
    const other = await signIn(app, ws.id, otherEmail, 'another passphrase');
    const d = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    for (const refresh_token of [other.refreshToken, 'rt_unknown']) {
      const e = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
      const res = await call(app, 'POST', '/api/v1/auth/logout', { token: e.accessToken, body: { refresh_token } });
      expect([res.status, res.body.data]).toEqual([200, { ended_sessions: 1 }]);
    }
    expect((await sessions(other.accessToken)).status).toBe(200);
    expect((await sessions(d.accessToken)).status).toBe(200);
    const bad = await call(app, 'POST', '/api/v1/auth/logout', { token: d.accessToken, body: { refresh_token: 7 } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('revoke-all ends every session of the caller, the current one included', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const b = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const res = await call(app, 'POST', '/api/v1/auth/sessions/revoke-all', { token: a.accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data.ended_sessions).toBeGreaterThanOrEqual(2);
    expect((await sessions(a.accessToken)).status).toBe(401);
    expect((await sessions(b.accessToken)).status).toBe(401);
    const em = app.deps.orm.em.fork();
    const audited = await em.find(
      AuditEvent,
      { eventType: 'auth.sessions_revoke_all', requestId: res.headers.get('x-request-id') as string },
      { filters: { tenant: { workspaceId: ws.id } } },
    );
    expect(audited).toHaveLength(1);
    expect(audited[0]?.details).toEqual({ ended_sessions: res.body.data.ended_sessions });
  });

  it('lists live sessions and revokes one; another user’s session is 404', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const b = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const listed = await sessions(a.accessToken);
    const ids = listed.body.data.map((s: { id: string }) => s.id);
    const bId = listed.body.data.find((s: { current: boolean; id: string }) => !s.current && ids.includes(s.id))?.id;
    expect(bId).toBeDefined();
    expect(listed.body.data[0]).toMatchObject({ ip: expect.any(String), created_at: expect.any(String) });

    const email = uniqueEmail('other');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'another fine password' } });
    const other = await signIn(app, ws.id, email, 'another fine password');
    const otherSession = (await sessions(other.accessToken)).body.data[0].id;
    expect((await call(app, 'DELETE', `/api/v1/auth/sessions/${otherSession}`, { token: a.accessToken })).status).toBe(404);

    const revoked = await call(app, 'DELETE', `/api/v1/auth/sessions/${bId}`, { token: a.accessToken });
    expect(revoked.status).toBe(200);
    expect((await sessions(b.accessToken)).status).toBe(401);
    expect((await sessions(a.accessToken)).status).toBe(200);
  });

  it('serves sessions through tRPC and GraphQL too', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const t = await trpc(app, 'query', 'auth.sessions', undefined, a.accessToken);
    expect(t.body.result.data.data.some((s: { current: boolean }) => s.current)).toBe(true);
    expect(t.body.result.data.meta).toMatchObject({ page: 1, per_page: 20 });
    const g = await graphql(app, '{ mySessions(perPage: 100) { data { id current } meta { total page perPage } } }', {}, a.accessToken);
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.mySessions.meta).toMatchObject({ page: 1, perPage: 100 });
    expect(g.body.data.mySessions.data.some((s: { current: boolean }) => s.current)).toBe(true);
    const id = g.body.data.mySessions.data.find((s: { current: boolean }) => s.current).id;
    const ended = await graphql(app, 'mutation($id: ID!) { revokeSession(id: $id) }', { id }, a.accessToken);
    expect(ended.body.data.revokeSession).toBe(true);
    expect((await sessions(a.accessToken)).status).toBe(401);
  });

  it('lists sessions a page at a time with meta, newest first; bad paging is 400', async () => {
    const email = uniqueEmail('paged');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'paged sessions password' } });
    const older = await signIn(app, ws.id, email, 'paged sessions password');
    app.clock.advance(1000);
    const newer = await signIn(app, ws.id, email, 'paged sessions password');
    const all = await sessions(newer.accessToken);
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ total: 2, page: 1, per_page: 20 });
    expect(all.body.data.map((s: { id: string }) => s.id)).toEqual([newer.sessionId, older.sessionId]);
    const second = await call(app, 'GET', '/api/v1/auth/sessions?page=2&per_page=1', { token: newer.accessToken });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual([all.body.data[1]]);
    expect(second.body.meta).toEqual({ total: 2, page: 2, per_page: 1 });
    for (const query of ['page=0', 'per_page=101', 'per_page=abc', 'page=abc']) {
      const bad = await call(app, 'GET', `/api/v1/auth/sessions?${query}`, { token: newer.accessToken });
      expect([bad.status, bad.body.error.code], query).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('every way a session ends sends session.revoked once per session ended, with one payload shape', async () => {
    const email = uniqueEmail('ends');
    const password = 'sessions end cleanly';
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } });
    const userId = created.body.data.id as string;
    const open = () => signIn(app, ws.id, email, password);
    const expected: Record<string, unknown>[] = [];
    const ended = (session: { sessionId: string }, reason: string) =>
      expected.push({ session_id: session.sessionId, user_id: userId, client_id: null, reason });

    const a = await open();
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: a.accessToken })).status).toBe(200);
    ended(a, 'logout');
    // The access token of an ended session ends nothing more (and says so).
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: a.accessToken })).status).toBe(401);

    const b = await open();
    const c = await open();
    expect((await call(app, 'DELETE', `/api/v1/auth/sessions/${b.sessionId}`, { token: c.accessToken })).status).toBe(200);
    ended(b, 'revoked');

    const d = await open();
    const all = await call(app, 'POST', '/api/v1/auth/sessions/revoke-all', { token: d.accessToken });
    expect(all.body.data).toEqual({ ended_sessions: 2 });
    for (const session of [d, c].sort((x, y) => x.sessionId.localeCompare(y.sessionId))) ended(session, 'revoke_all');
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: d.refreshToken } })).status).toBe(401);

    const e = await open();
    const f = await open();
    const changed = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: e.accessToken,
      body: { current_password: password, new_password: password },
    });
    expect(changed.body.data).toMatchObject({ ended_sessions: 1 });
    ended(f, 'password_change');

    // Reuse detection: a replayed refresh token ends its session.
    const g = await open();
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: g.refreshToken } })).status).toBe(200);
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: g.refreshToken } })).status).toBe(401);
    ended(g, 'refresh_token_reuse');
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: g.refreshToken } })).status).toBe(401);

    const patch = (status: string) => call(app, 'PATCH', `/api/v1/users/${userId}`, { token: ws.apiKey, body: { status } });
    // `e` is still live: the lock ends it (with no second event for the sessions that ended before).
    expect((await patch('locked')).status).toBe(200);
    ended(e, 'user_locked');
    await patch('active');
    const h = await open();
    expect((await patch('deactivated')).status).toBe(200);
    ended(h, 'user_deactivated');
    await patch('active');
    const i = await open();
    expect((await call(app, 'DELETE', `/api/v1/users/${userId}`, { token: ws.apiKey })).status).toBe(200);
    ended(i, 'user_deleted');

    const told = await toldEvents(app, ws.id, 'session.revoked', userId);
    // revoke-all ends its sessions in one statement: their events share a timestamp, so compare as sets there.
    const key = (p: Record<string, unknown>) => `${String(p.reason)} ${String(p.session_id)}`;
    expect(told.map(key).sort()).toEqual(expected.map(key).sort());
    expect(told).toEqual(expect.arrayContaining(expected));
    expect(told).toHaveLength(expected.length);
  });

  it('keeps user calls for users: an API key is FORBIDDEN there', async () => {
    const res = await call(app, 'POST', '/api/v1/auth/logout', { token: ws.apiKey });
    expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('checks roles live: a member may not manage users, the owner may; deactivation ends tokens', async () => {
    const email = uniqueEmail('member');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'member password 1' } });
    const member = await signIn(app, ws.id, email, 'member password 1');
    const denied = await call(app, 'GET', '/api/v1/users', { token: member.accessToken });
    expect([denied.status, denied.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const owner = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect((await call(app, 'GET', '/api/v1/users', { token: owner.accessToken })).status).toBe(200);

    await call(app, 'PATCH', `/api/v1/users/${created.body.data.id}`, { token: owner.accessToken, body: { status: 'deactivated' } });
    expect((await sessions(member.accessToken)).body.error.code).toBe('INVALID_TOKEN');
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: member.refreshToken } })).status).toBe(401);
  });

  it('refuses tampered and foreign tokens with INVALID_TOKEN', async () => {
    const a = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const [h, p, s] = a.accessToken.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, roles: ['owner'], sub: 'usr_x' })).toString('base64url')}.${s}`;
    expect((await sessions(forged)).body.error.code).toBe('INVALID_TOKEN');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`;
    expect((await sessions(none)).body.error.code).toBe('INVALID_TOKEN');
  });
});
