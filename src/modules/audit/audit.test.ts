import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { AuditEvent } from './audit.entity.ts';

describe('audit log', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let userId: string;
  let userEmail: string;
  let viewerToken: string;
  let memberToken: string;
  const PASSWORD = 'audit passphrase';

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    userEmail = uniqueEmail('audited');
    userId = (await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: userEmail, password: PASSWORD } })).body.data.id;
    await call(app, 'PATCH', `/api/v1/users/${userId}`, { token: ws.apiKey, body: { name: 'Renamed' } });
    await login(app, ws.id, userEmail, 'not the password at all');
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const viewerEmail = uniqueEmail('viewer');
    const viewer = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: viewerEmail, password: PASSWORD } });
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: viewer.body.data.id, role_id: viewerRole } });
    viewerToken = (await signIn(app, ws.id, viewerEmail, PASSWORD)).accessToken;
    memberToken = (await signIn(app, ws.id, userEmail, PASSWORD)).accessToken;
  });
  afterAll(() => app.close());

  it('lists events newest first in the contract shape, paginated with a total', async () => {
    const res = await call(app, 'GET', '/api/v1/audit/events/?per_page=3', { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ page: 1, per_page: 3, total_capped: false });
    expect(res.body.meta.total).toBeGreaterThanOrEqual(8);
    expect(res.body.data).toHaveLength(3);
    const times = res.body.data.map((e: { created_at: string }) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const event = res.body.data[0];
    expect(Object.keys(event).sort()).toEqual(
      ['actor', 'created_at', 'details', 'event_type', 'id', 'ip', 'outcome', 'request_id', 'target', 'user_agent'].sort(),
    );
    const second = await call(app, 'GET', '/api/v1/audit/events/?per_page=3&page=2', { token: ws.apiKey });
    const firstIds = res.body.data.map((e: { id: string }) => e.id);
    for (const e of second.body.data) expect(firstIds).not.toContain(e.id);
  });

  it('answers the exact path with and without its trailing slash', async () => {
    expect((await call(app, 'GET', '/api/v1/audit/events', { token: ws.apiKey })).status).toBe(200);
  });

  it('filters by event_type and outcome', async () => {
    const created = await call(app, 'GET', '/api/v1/audit/events/?event_type=user.create', { token: ws.apiKey });
    expect(created.body.data.length).toBeGreaterThanOrEqual(2);
    for (const e of created.body.data) expect(e.event_type).toBe('user.create');
    expect(created.body.data.map((e: any) => e.target.id)).toContain(userId);

    const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure', { token: ws.apiKey });
    expect(failures.body.meta.total).toBe(1);
    expect(failures.body.data[0]).toMatchObject({ outcome: 'failure', target: { type: 'user', id: userId } });
    expect(JSON.stringify(failures.body.data)).not.toContain('not the password at all');

    const successes = await call(app, 'GET', '/api/v1/audit/events/?outcome=success&per_page=100', { token: ws.apiKey });
    for (const e of successes.body.data) expect(e.outcome).toBe('success');
  });

  it('filters by actor, target and time range', async () => {
    const byTarget = await call(app, 'GET', `/api/v1/audit/events/?target_id=${userId}&per_page=100`, { token: ws.apiKey });
    const types = byTarget.body.data.map((e: { event_type: string }) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(['user.create', 'user.update', 'auth.login']));
    for (const e of byTarget.body.data) expect(e.target.id).toBe(userId);

    const byActor = await call(app, 'GET', `/api/v1/audit/events/?actor_id=${userId}`, { token: ws.apiKey });
    expect(byActor.body.data.length).toBeGreaterThanOrEqual(1);
    for (const e of byActor.body.data) expect(e.actor).toEqual({ type: 'user', id: userId });
    const byKey = await call(app, 'GET', '/api/v1/audit/events/?actor_type=api_key&event_type=user.update', { token: ws.apiKey });
    expect(byKey.body.data).toHaveLength(1);

    const now = app.clock.now();
    const future = new Date(now.getTime() + 60_000).toISOString();
    const past = new Date(now.getTime() - 3600_000).toISOString();
    const none = await call(app, 'GET', `/api/v1/audit/events/?since=${encodeURIComponent(future)}`, { token: ws.apiKey });
    expect(none.body).toMatchObject({ data: [], meta: { total: 0 } });
    const all = await call(app, 'GET', `/api/v1/audit/events/?since=${encodeURIComponent(past)}&until=${encodeURIComponent(future)}`, {
      token: ws.apiKey,
    });
    expect(all.body.meta.total).toBeGreaterThanOrEqual(8);
    const before = await call(app, 'GET', `/api/v1/audit/events/?until=${encodeURIComponent(past)}`, { token: ws.apiKey });
    expect(before.body.meta.total).toBe(0);
  });

  it('refuses malformed filters with 400', async () => {
    for (const qs of [
      'outcome=maybe',
      'since=yesterday',
      'page=0',
      'per_page=101',
      'since=2030-01-02T00:00:00Z&until=2030-01-01T00:00:00Z',
    ]) {
      const res = await call(app, 'GET', `/api/v1/audit/events/?${qs}`, { token: ws.apiKey });
      expect([res.status, res.body.error?.code], qs).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('answers a page past the end empty with the total, as every list does', async () => {
    const first = await call(app, 'GET', '/api/v1/audit/events/', { token: ws.apiKey });
    for (const qs of ['page=501', 'page=999', 'per_page=100&page=101']) {
      const res = await call(app, 'GET', `/api/v1/audit/events/?${qs}`, { token: ws.apiKey });
      expect([res.status, res.body.data], qs).toEqual([200, []]);
      expect(res.body.meta, qs).toMatchObject({ total: first.body.meta.total, total_capped: false });
    }
  });

  it('pages reach the newest 10,000 matches and stop at the edge', async () => {
    const crowded = await createWorkspace(app, 'Crowded log');
    // The table is append-only, so the seeded ids carry the workspace's: a second run adds its own.
    const seedId = (n: number) => `evt_${crowded.id}_${String(n).padStart(5, '0')}`;
    await app.deps.orm.em.getConnection().execute(
      `insert into audit_events (id, workspace_id, event_type, outcome, actor_type, details, created_at)
       select 'evt_' || ? || '_' || lpad(n::text, 5, '0'), ?, 'seed.event', 'success', 'system', '{}', now() - n * interval '1 second'
       from generate_series(1, 10005) n`,
      [crowded.id, crowded.id],
    );
    const q = (qs: string) => call(app, 'GET', `/api/v1/audit/events/?event_type=seed.event&${qs}`, { token: crowded.apiKey });
    const edge = await q('per_page=30&page=334');
    expect(edge.status).toBe(200);
    expect(edge.body.meta).toMatchObject({ total: 10000, total_capped: true, page: 334, per_page: 30 });
    expect(edge.body.data).toHaveLength(10);
    expect(edge.body.data.at(-1).id).toBe(seedId(10000));
    const past = await q('per_page=20&page=501');
    expect([past.status, past.body.data, past.body.meta.total]).toEqual([200, [], 10000]);
  });

  it('gets one event by id; unknown and malformed ids are 404', async () => {
    const list = await call(app, 'GET', '/api/v1/audit/events/?per_page=1', { token: ws.apiKey });
    const id = list.body.data[0].id;
    const one = await call(app, 'GET', `/api/v1/audit/events/${id}`, { token: ws.apiKey });
    expect(one.body.data).toEqual(list.body.data[0]);
    expect((await call(app, 'GET', '/api/v1/audit/events/evt_00000000000000000000000000', { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', '/api/v1/audit/events/nope', { token: ws.apiKey })).status).toBe(404);
  });

  it('lets viewers read and members not', async () => {
    expect((await call(app, 'GET', '/api/v1/audit/events/', { token: viewerToken })).status).toBe(200);
    const member = await call(app, 'GET', '/api/v1/audit/events/', { token: memberToken });
    expect([member.status, member.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await call(app, 'GET', '/api/v1/audit/events/')).status).toBe(401);
  });

  it('shows no other workspace’s events', async () => {
    const other = await createWorkspace(app, 'Other');
    const res = await call(app, 'GET', `/api/v1/audit/events/?target_id=${userId}`, { token: other.apiKey });
    expect(res.body).toMatchObject({ data: [], meta: { total: 0 } });
    const list = await call(app, 'GET', '/api/v1/audit/events/?per_page=1', { token: ws.apiKey });
    expect((await call(app, 'GET', `/api/v1/audit/events/${list.body.data[0].id}`, { token: other.apiKey })).status).toBe(404);
  });

  it('reports events and counts by type, outcome and day over GraphQL', async () => {
    const res = await graphql(
      app,
      `
        query ($filter: AuditFilter) {
          auditEvents(filter: $filter, perPage: 5) {
            data {
              id
              eventType
              outcome
              actor {
                type
                id
              }
              target {
                type
                id
              }
              details
              createdAt
            }
            meta {
              total
              totalCapped
            }
          }
          byType: auditEventCounts(groupBy: event_type) {
            key
            count
          }
          byOutcome: auditEventCounts(groupBy: outcome, filter: { eventType: "auth.login" }) {
            key
            count
          }
          byDay: auditEventCounts(groupBy: day) {
            key
            count
          }
        }
      `,
      { filter: { targetId: userId, eventType: 'auth.login' } },
      viewerToken,
    );
    expect(res.body.errors).toBeUndefined();
    const data = res.body.data;
    expect(data.auditEvents.data.length).toBeGreaterThanOrEqual(2);
    for (const e of data.auditEvents.data) expect(e.target.id).toBe(userId);
    expect(typeof data.auditEvents.data[0].details).toBe('object');
    const byType = Object.fromEntries(data.byType.map((c: { key: string; count: number }) => [c.key, c.count]));
    expect(byType['user.create']).toBeGreaterThanOrEqual(3);
    expect(byType['user.update']).toBe(1);
    const byOutcome = Object.fromEntries(data.byOutcome.map((c: { key: string; count: number }) => [c.key, c.count]));
    expect(byOutcome.failure).toBe(1);
    expect(byOutcome.success).toBeGreaterThanOrEqual(2);
    const today = app.clock.now().toISOString().slice(0, 10);
    expect(data.byDay.map((c: { key: string }) => c.key)).toContain(today);
    const total = data.byDay.reduce((sum: number, c: { count: number }) => sum + c.count, 0);
    expect(total).toBe(Object.values(byType).reduce((sum: number, n) => sum + (n as number), 0));

    const member = await graphql(app, '{ auditEventCounts(groupBy: outcome) { key count } }', {}, memberToken);
    expect(member.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  });

  describe('is append-only, enforced by the database', () => {
    async function anEvent(): Promise<string> {
      const list = await call(app, 'GET', '/api/v1/audit/events/?per_page=1', { token: ws.apiKey });
      return list.body.data[0].id;
    }

    it('refuses UPDATE, DELETE and TRUNCATE in SQL', async () => {
      const id = await anEvent();
      const conn = app.deps.orm.em.getConnection();
      await expect(conn.execute(`update audit_events set outcome = 'failure' where id = ?`, [id])).rejects.toThrow(/append-only/);
      await expect(conn.execute(`delete from audit_events where id = ?`, [id])).rejects.toThrow(/append-only/);
      await expect(conn.execute(`truncate audit_events`)).rejects.toThrow(/append-only/);
      const still = await call(app, 'GET', `/api/v1/audit/events/${id}`, { token: ws.apiKey });
      expect(still.status).toBe(200);
    });

    it('refuses changes and removals through the ORM', async () => {
      const id = await anEvent();
      const em = app.deps.orm.em.fork();
      em.setFilterParams('tenant', { workspaceId: ws.id });
      const event = await em.findOneOrFail(AuditEvent, { id });
      event.details = { tampered: true };
      await expect(em.flush()).rejects.toThrow(/append-only/);
      const again = app.deps.orm.em.fork();
      again.setFilterParams('tenant', { workspaceId: ws.id });
      await expect(again.nativeDelete(AuditEvent, { id })).rejects.toThrow(/append-only/);
      await expect(again.nativeUpdate(AuditEvent, { id }, { outcome: 'failure' })).rejects.toThrow(/append-only/);
      const removed = app.deps.orm.em.fork();
      removed.setFilterParams('tenant', { workspaceId: ws.id });
      removed.remove(await removed.findOneOrFail(AuditEvent, { id }));
      await expect(removed.flush()).rejects.toThrow(/append-only/);
      const still = await call(app, 'GET', `/api/v1/audit/events/${id}`, { token: ws.apiKey });
      expect(still.body.data.details).not.toHaveProperty('tampered');
    });
  });
});
