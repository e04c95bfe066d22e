import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { drainEarlierEvents, startWebhookReceiver, toldEvents, type Told, type WebhookReceiver } from '../../../test/helpers/events.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const MINUTE = 60_000;

/**
 * CONTRACT: an assignment with an `expires_at` stops granting then, to the second. A subscriber that
 * mirrors roles hears of it as of any other end of a grant: one `role.revoked` (`reason: expired`), with
 * one `role.revoke` audit row by the system, however many instances run and whatever races the lapse.
 */
describe('time-bound role assignments lapse at their expires_at, told once', () => {
  let app: TestApp;
  /** A second instance on the same database: its dispatcher sends deliveries too. */
  let other: TestApp;
  let ws: TestWorkspace;
  let receiver: WebhookReceiver;
  let told: Told[];

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    other = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    await drainEarlierEvents(app);
    ws = await createWorkspace(app, 'Lapses');
    receiver = await startWebhookReceiver();
    told = receiver.told;
    const url = receiver.url;
    const endpoint = await call(app, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url, event_types: ['role.assigned', 'role.revoked'] },
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await receiver.close();
    await other.close();
    await app.close();
  });

  async function user(): Promise<string> {
    const res = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('lapse'), password: 'lapse test passphrase' },
    });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  async function assign(userId: string, expiresAt: Date | null) {
    return call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: userId, role_id: 'viewer', expires_at: expiresAt?.toISOString() ?? null },
    });
  }

  /**
   * Moves both instances' clocks: a delivery one dispatcher claims is leased 20 s by its clock, so two
   * clocks a minute apart would each take the other's lease for expired and send it twice.
   */
  function advance(ms: number): void {
    app.clock.advance(ms);
    other.clock.set(app.clock.now());
  }

  function inAMinute(): Date {
    return new Date(app.clock.now().getTime() + MINUTE);
  }

  /** The `role.revoke` audit rows about `userId`. */
  /** The revokes of a role from `userId` the log tells (successes: a refused revoke leaves a failure row naming the user too). */
  async function revokeAudit(userId: string, outcome: 'success' | 'failure' = 'success') {
    const res = await call(app, 'GET', `/api/v1/audit/events/?event_type=role.revoke&outcome=${outcome}&target_id=${userId}`, {
      token: ws.apiKey,
    });
    expect(res.status).toBe(200);
    return res.body.data as { actor: { type: string; id: string | null }; outcome: string; details: Record<string, unknown> }[];
  }

  /** What the endpoint was told about `userId`, once every delivery is sent (by either instance). */
  async function delivered(type: string, userId: string) {
    await Promise.all([app.deps.webhooks.tick(), other.deps.webhooks.tick()]);
    await app.deps.webhooks.tick();
    return told.filter((t) => t.type === type && t.data.user_id === userId).map((t) => t.data);
  }

  async function rolesOf(userId: string): Promise<string[]> {
    const res = await call(app, 'GET', `/api/v1/users/${userId}/roles`, { token: ws.apiKey });
    return res.body.data.map((r: { key: string }) => r.key).sort();
  }

  it('tells of a lapse at its expires_at, to the second: one role.revoked (reason expired) and one audit row by the system', async () => {
    const userId = await user();
    const expiresAt = inAMinute();
    expect((await assign(userId, expiresAt)).status).toBe(201);
    const viewer = (await call(app, 'GET', '/api/v1/roles/viewer', { token: ws.apiKey })).body.data.id as string;

    advance(MINUTE - 1);
    await app.deps.roleLapses.tick();
    expect(await toldEvents(app, ws.id, 'role.revoked', userId)).toEqual([]);
    expect(await rolesOf(userId)).toEqual(['member', 'viewer']);

    advance(1);
    await app.deps.roleLapses.tick();
    const lapse = { user_id: userId, role_id: viewer, role: 'viewer', reason: 'expired', expires_at: expiresAt.toISOString() };
    expect(await delivered('role.revoked', userId)).toEqual([lapse]);
    // Dated when the grant ended.
    expect(told.find((t) => t.type === 'role.revoked' && t.data.user_id === userId)).toMatchObject({ timestamp: expiresAt.toISOString() });
    const audit = await revokeAudit(userId);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: { type: 'system', id: null },
      outcome: 'success',
      details: { role_id: viewer, role: 'viewer', reason: 'expired', expires_at: expiresAt.toISOString() },
    });
    expect(await rolesOf(userId)).toEqual(['member']);

    // Later rounds find nothing more to tell.
    advance(MINUTE);
    await app.deps.roleLapses.tick();
    await app.deps.roleLapses.tick();
    expect(await delivered('role.revoked', userId)).toEqual([lapse]);
    expect(await revokeAudit(userId)).toHaveLength(1);
  });

  it('tells each lapse once when two instances on one database run their rounds at the same moment', async () => {
    const users = [];
    for (let i = 0; i < 6; i += 1) users.push(await user());
    const expiresAt = inAMinute();
    for (const userId of users) expect((await assign(userId, expiresAt)).status).toBe(201);

    advance(MINUTE);
    await Promise.all([app.deps.roleLapses.tick(), other.deps.roleLapses.tick(), app.deps.roleLapses.tick(), other.deps.roleLapses.tick()]);
    for (const userId of users) {
      expect(await toldEvents(app, ws.id, 'role.revoked', userId)).toEqual([expect.objectContaining({ reason: 'expired' })]);
      expect(await revokeAudit(userId)).toHaveLength(1);
      expect(await rolesOf(userId)).toEqual(['member']);
    }
  });

  it('tells a revoke just before the lapse as the revoke alone', async () => {
    const userId = await user();
    expect((await assign(userId, inAMinute())).status).toBe(201);
    advance(MINUTE - 1000);
    const revoked = await call(app, 'POST', '/api/v1/roles/revoke', { token: ws.apiKey, body: { user_id: userId, role_id: 'viewer' } });
    expect(revoked.status).toBe(200);
    advance(2000);
    await app.deps.roleLapses.tick();
    expect(await delivered('role.revoked', userId)).toEqual([expect.not.objectContaining({ reason: expect.anything() })]);
    expect((await revokeAudit(userId)).map((row) => row.actor.type)).toEqual(['api_key']);
  });

  it('tells one role.revoked when a revoke on one instance races the lapse on another', async () => {
    const users = [];
    for (let i = 0; i < 4; i += 1) users.push(await user());
    const expiresAt = inAMinute();
    for (const userId of users) expect((await assign(userId, expiresAt)).status).toBe(201);
    // This instance's clock is a second before the end (the grant is live there), the other's a second after.
    app.clock.set(new Date(expiresAt.getTime() - 1000));
    other.clock.set(new Date(expiresAt.getTime() + 1000));
    const revokes = users.map((userId) =>
      call(app, 'POST', '/api/v1/roles/revoke', { token: ws.apiKey, body: { user_id: userId, role_id: 'viewer' } }),
    );
    const [, ...answers] = await Promise.all([other.deps.roleLapses.tick(), ...revokes]);
    await other.deps.roleLapses.tick();
    app.clock.set(other.clock.now());
    for (const [i, userId] of users.entries()) {
      const status = answers[i]?.status;
      expect([200, 404]).toContain(status);
      const events = await toldEvents(app, ws.id, 'role.revoked', userId);
      expect(events).toHaveLength(1);
      // The revoke that answered 200 is the one told; one that found the grant lapsed tells nothing.
      expect(events[0]?.reason).toBe(status === 200 ? undefined : 'expired');
      expect(await revokeAudit(userId)).toHaveLength(1);
      // A revoke that found the grant lapsed is a refusal (404), recorded as one.
      expect((await revokeAudit(userId, 'failure')).map((row) => row.details.reason)).toEqual(status === 404 ? ['NOT_FOUND'] : []);
    }
  });

  it('gives a lapsed role again as a new grant: 201 and role.assigned, before the round reached it or after', async () => {
    const after = await user();
    const expiresAt = inAMinute();
    expect((await assign(after, expiresAt)).status).toBe(201);
    advance(MINUTE);
    await app.deps.roleLapses.tick();
    const again = await assign(after, null);
    expect([again.status, again.body.data.assigned_at]).toEqual([201, app.clock.now().toISOString()]);
    expect(await delivered('role.assigned', after)).toEqual([
      expect.objectContaining({ role: 'viewer', expires_at: expiresAt.toISOString() }),
      expect.objectContaining({ role: 'viewer', expires_at: null }),
    ]);
    expect(await rolesOf(after)).toEqual(['member', 'viewer']);

    // Given again once it stopped granting, whether or not a round has told of its lapse yet: the lapse
    // is told once (by the assignment, if first), and the round after finds nothing left to tell.
    const before = await user();
    const endsAt = inAMinute();
    expect((await assign(before, endsAt)).status).toBe(201);
    advance(MINUTE);
    expect((await assign(before, null)).status).toBe(201);
    await app.deps.roleLapses.tick();
    expect(await delivered('role.revoked', before)).toEqual([
      expect.objectContaining({ reason: 'expired', expires_at: endsAt.toISOString() }),
    ]);
    expect(await delivered('role.assigned', before)).toHaveLength(2);
    expect(await revokeAudit(before)).toHaveLength(1);
    expect(await rolesOf(before)).toEqual(['member', 'viewer']);
  });

  it('describes role.revoked as covering a lapse in the event types', async () => {
    const res = await call(app, 'GET', '/api/v1/webhooks/event-types?per_page=100', { token: ws.apiKey });
    const revoked = res.body.data.find((t: { type: string }) => t.type === 'role.revoked');
    expect(revoked.description).toMatch(/lapse/);
  });
});
