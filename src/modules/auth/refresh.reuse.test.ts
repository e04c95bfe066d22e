import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('refresh tokens: rotation, reuse detection, races, expiry', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const refresh = (token: string) => call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: token } });
  const me = (accessToken: string) => call(app, 'GET', '/api/v1/auth/sessions', { token: accessToken });

  /** The reason of each call's `auth.refresh` failure row, found by its request id. */
  async function refreshFailureReasons(...calls: { headers: Headers }[]): Promise<unknown[]> {
    const rows = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.refresh&outcome=failure&per_page=100', {
      token: ws.apiKey,
    });
    return calls.map(
      (c) => rows.body.data.find((e: { request_id: string }) => e.request_id === c.headers.get('x-request-id'))?.details.reason,
    );
  }

  it('rotates: a refresh answers new tokens of the same session, in the sign-in shape', async () => {
    const first = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const res = await refresh(first.refreshToken);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ token_type: 'Bearer', expires_in: 900, user: { id: ws.owner.id } });
    expect(res.body.data.refresh_token).not.toBe(first.refreshToken);
    const sessions = await me(res.body.data.access_token);
    expect(sessions.status).toBe(200);
    expect(sessions.body.data.filter((s: { current: boolean }) => s.current)).toHaveLength(1);
  });

  it('treats a used token as stolen: the whole session ends, the newer tokens too', async () => {
    const first = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const second = await refresh(first.refreshToken);
    expect(second.status).toBe(200);
    const replay = await refresh(first.refreshToken);
    expect([replay.status, replay.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const newer = await refresh(second.body.data.refresh_token);
    expect([newer.status, newer.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const access = await me(second.body.data.access_token);
    expect([access.status, access.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect(await refreshFailureReasons(replay, newer)).toEqual(['refresh_token_reuse', 'session_ended']);
  });

  it('refuses a refresh token presented with another workspace in X-Tenant-ID, touching nothing', async () => {
    const other = await createWorkspace(app);
    const session = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const foreign = await call(app, 'POST', '/api/v1/auth/refresh', {
      headers: { 'x-tenant-id': other.id },
      body: { refresh_token: session.refreshToken },
    });
    expect([foreign.status, foreign.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    // Neither consumed nor taken for reuse: it still works, named by its own workspace or by none.
    const own = await call(app, 'POST', '/api/v1/auth/refresh', {
      headers: { 'x-tenant-id': ws.id },
      body: { refresh_token: session.refreshToken },
    });
    expect(own.status).toBe(200);
    expect((await refresh(own.body.data.refresh_token)).status).toBe(200);
  });

  it('audits a never-used token of a session that ended (logout) as session_ended, not as reuse', async () => {
    const session = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: session.accessToken })).status).toBe(200);
    const late = await refresh(session.refreshToken);
    expect([late.status, late.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect(await refreshFailureReasons(late)).toEqual(['session_ended']);
  });

  it('lets exactly one of 20 concurrent refreshes with one token succeed', async () => {
    const first = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(first.refreshToken)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(19);
    expect(results.filter((r) => r.status === 401).every((r) => r.body.error.code === 'INVALID_TOKEN')).toBe(true);
  });

  it('refuses unknown and garbage tokens without touching anything', async () => {
    for (const token of ['rt_unknown', 'x', 'rt_' + 'a'.repeat(43)]) {
      const res = await refresh(token);
      expect([res.status, res.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    }
    expect((await call(app, 'POST', '/api/v1/auth/refresh', { body: {} })).status).toBe(400);
  });

  it('expires access tokens after 15 minutes and refresh tokens after 30 days', async () => {
    const first = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    app.clock.advance(14 * 60 * 1000);
    expect((await me(first.accessToken)).status).toBe(200);
    app.clock.advance(2 * 60 * 1000);
    const expired = await me(first.accessToken);
    expect([expired.status, expired.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const renewed = await refresh(first.refreshToken);
    expect(renewed.status).toBe(200);
    app.clock.advance(30 * 24 * 60 * 60 * 1000);
    const tooOld = await refresh(renewed.body.data.refresh_token);
    expect([tooOld.status, tooOld.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('ends a session 30 days after its sign-in however often it is refreshed, its last access token too', async () => {
    const signedIn = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const start = app.clock.now().getTime();
    const day = 24 * 60 * 60 * 1000;
    app.clock.set(new Date(start + 29 * day));
    const early = await refresh(signedIn.refreshToken);
    expect(early.status).toBe(200);
    app.clock.set(new Date(start + 30 * day - 1000));
    const last = await refresh(early.body.data.refresh_token);
    expect(last.status).toBe(200);
    const listed = await me(last.body.data.access_token);
    expect(listed.body.data.find((s: { current: boolean }) => s.current).expires_at).toBe(new Date(start + 30 * day).toISOString());
    app.clock.set(new Date(start + 30 * day));
    const ended = await me(last.body.data.access_token);
    expect([ended.status, ended.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const refused = await refresh(last.body.data.refresh_token);
    expect([refused.status, refused.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });
});
