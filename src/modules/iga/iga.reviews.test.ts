import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'review passphrase';

interface Person {
  id: string;
  email: string;
  token: string;
}

describe('access reviews', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const roleIds: Record<string, string> = {};
  let admin: Person;
  let viewer: Person;
  let ownerToken: string;

  async function person(label: string, ...roles: string[]): Promise<Person> {
    const email = uniqueEmail(label);
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    for (const role of roles) {
      await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: created.body.data.id, role_id: roleIds[role] },
      });
    }
    return { id: created.body.data.id, email, token: (await signIn(app, ws.id, email, PASSWORD)).accessToken };
  }

  const start = (body: object, token = admin.token) => call(app, 'POST', '/api/v1/iga/reviews', { token, body });
  const items = (id: string, query = '') => call(app, 'GET', `/api/v1/iga/reviews/${id}/items?per_page=100${query}`, { token: ws.apiKey });
  const decide = (id: string, itemId: string, decision: string, token = admin.token) =>
    call(app, 'POST', `/api/v1/iga/reviews/${id}/items/${itemId}/decide`, { token, body: { decision, comment: `${decision} it` } });

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Reviewed');
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    for (const r of roles.body.data) roleIds[r.key] = r.id;
    roleIds.support = (
      await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Support', key: 'support', permissions: ['users:read'] } })
    ).body.data.id;
    ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    admin = await person('admin', 'admin');
    viewer = await person('viewer', 'viewer');
  });
  afterAll(() => app.close());

  it('reviews a role: items are its current holders; revoke removes the access at once; the last decision completes it', async () => {
    const keepMe = await person('keep', 'support');
    const dropMe = await person('drop', 'support');
    expect((await call(app, 'GET', '/api/v1/users', { token: dropMe.token })).status).toBe(200);

    const res = await start({ name: 'Q4 support access', scope: { type: 'role', id: roleIds.support }, due_at: '2099-01-01T00:00:00Z' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'Q4 support access',
      scope: { type: 'role', id: roleIds.support, name: 'Support' },
      status: 'in_progress',
      progress: { total: 2, decided: 0, kept: 0, revoked: 0, percent: 0 },
      created_by: { type: 'user', id: admin.id },
      due_at: '2099-01-01T00:00:00.000Z',
      completed_at: null,
    });
    const reviewId = res.body.data.id;
    const listed = await items(reviewId);
    expect(listed.body.meta.total).toBe(2);
    const byUser = Object.fromEntries(listed.body.data.map((i: { user: { id: string } }) => [i.user.id, i]));
    expect(byUser[keepMe.id]).toMatchObject({
      review_id: reviewId,
      user: { email: keepMe.email },
      entitlement: { type: 'role', id: roleIds.support },
      decision: null,
    });

    const kept = await decide(reviewId, byUser[keepMe.id].id, 'keep');
    expect(kept.status).toBe(200);
    expect(kept.body.data.item).toMatchObject({ decision: 'keep', decided_by: { type: 'user', id: admin.id }, comment: 'keep it' });
    expect(kept.body.data.review.progress).toEqual({ total: 2, decided: 1, kept: 1, revoked: 0, percent: 50 });
    expect((await decide(reviewId, byUser[keepMe.id].id, 'revoke')).status).toBe(409);

    const revoked = await decide(reviewId, byUser[dropMe.id].id, 'revoke');
    expect(revoked.body.data.review).toMatchObject({
      status: 'completed',
      progress: { total: 2, decided: 2, kept: 1, revoked: 1, percent: 100 },
    });
    expect(revoked.body.data.review.completed_at).not.toBeNull();
    // The access is gone at once: the same access token no longer reads users.
    expect((await call(app, 'GET', '/api/v1/users', { token: dropMe.token })).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/users', { token: keepMe.token })).status).toBe(200);
    const roles = await call(app, 'GET', `/api/v1/users/${dropMe.id}/roles`, { token: ws.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key)).toEqual(['member']);

    const again = await decide(reviewId, byUser[dropMe.id].id, 'keep');
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
    const completed = await call(app, 'GET', `/api/v1/iga/reviews/${reviewId}`, { token: viewer.token });
    expect(completed.body.data.status).toBe('completed');
    expect(
      (await call(app, 'GET', '/api/v1/iga/reviews?status=completed', { token: ws.apiKey })).body.data.map((r: { id: string }) => r.id),
    ).toContain(reviewId);

    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${reviewId}&outcome=success&per_page=10`, { token: ws.apiKey });
    expect(audit.body.data.map((e: { event_type: string }) => e.event_type).sort()).toEqual([
      'access_review.complete',
      'access_review.decide',
      'access_review.decide',
      'access_review.start',
    ]);
    const revokeAudit = await call(app, 'GET', `/api/v1/audit/events/?event_type=role.revoke&target_id=${dropMe.id}`, { token: ws.apiKey });
    expect(revokeAudit.body.meta.total).toBe(1);
    const [event] = await app.deps.orm.em
      .getConnection()
      .execute<{ payload: any }[]>(`select payload from events where workspace_id = ? and type = 'access_review.completed'`, [ws.id]);
    expect(event?.payload).toMatchObject({ id: reviewId, progress: { kept: 1, revoked: 1 } });
  });

  it('reviews a group: revoke removes the membership', async () => {
    const groupId = (await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Contractors' } })).body.data.id;
    const members = [await person('c1'), await person('c2'), await person('c3')];
    for (const m of members) await call(app, 'POST', `/api/v1/groups/${groupId}/members`, { token: ws.apiKey, body: { user_id: m.id } });
    const review = (await start({ name: 'Contractors', scope: { type: 'group', id: groupId } })).body.data;
    expect(review.progress.total).toBe(3);
    const list = (await items(review.id)).body.data;
    const first = list.find((i: { user: { id: string } }) => i.user.id === members[0]?.id);
    await decide(review.id, first.id, 'revoke');
    const pending = await items(review.id, '&decision=pending');
    expect(pending.body.meta.total).toBe(2);
    expect((await items(review.id, '&decision=revoke')).body.data.map((i: { id: string }) => i.id)).toEqual([first.id]);
    const group = await call(app, 'GET', '/api/v1/iga/entitlements?type=group', { token: ws.apiKey });
    const holders = group.body.data.find((e: { id: string }) => e.id === groupId).holders.map((h: { user_id: string }) => h.user_id);
    expect(holders.sort()).toEqual([members[1]?.id, members[2]?.id].sort());
    expect((await call(app, 'GET', `/api/v1/iga/reviews/${review.id}`, { token: ws.apiKey })).body.data.status).toBe('in_progress');
  });

  it('revoking a role that expired since the review started removes nothing: only its lapse is told (role.revoked, reason expired)', async () => {
    const lapsing = await person('lapsing');
    const expiresAt = new Date(app.clock.now().getTime() + 60_000).toISOString();
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: lapsing.id, role_id: roleIds.support, expires_at: expiresAt },
    });
    const review = (await start({ name: 'Lapsing', role_id: roleIds.support })).body.data;
    const item = (await items(review.id)).body.data.find((i: { user: { id: string } }) => i.user.id === lapsing.id);
    expect(item.grant_expires_at).toBe(new Date(expiresAt).toISOString());
    app.clock.advance(61_000);

    const revoked = await decide(review.id, item.id, 'revoke');
    expect([revoked.status, revoked.body.data.item.decision]).toEqual([200, 'revoke']);
    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=access_review.decide&target_id=${review.id}`, {
      token: ws.apiKey,
    });
    expect(audit.body.data[0].details).toMatchObject({ item_id: item.id, access_removed: false });
    await app.deps.roleLapses.tick();
    const roleRevokes = await call(app, 'GET', `/api/v1/audit/events/?event_type=role.revoke&target_id=${lapsing.id}`, {
      token: ws.apiKey,
    });
    expect(
      roleRevokes.body.data.map((row: { actor: { type: string }; details: { reason?: string } }) => [row.actor.type, row.details.reason]),
    ).toEqual([['system', 'expired']]);
    const events = await app.deps.orm.em
      .getConnection()
      .execute<{ reason: string | null }[]>(
        `select payload->>'reason' as reason from events where workspace_id = ? and type = 'role.revoked' and payload->>'user_id' = ?`,
        [ws.id, lapsing.id],
      );
    expect(events).toEqual([{ reason: 'expired' }]);
  });

  it('reviews everyone: every role grant but the default member role, and every group membership', async () => {
    const review = (await start({ name: 'Everyone', scope: { type: 'everyone' } }, ws.apiKey)).body.data;
    const list = await items(review.id);
    expect(review.progress.total).toBe(list.body.meta.total);
    const kinds = list.body.data.map((i: { entitlement: { type: string; name: string } }) => `${i.entitlement.type}:${i.entitlement.name}`);
    expect(kinds).toEqual(expect.arrayContaining(['role:owner', 'role:admin', 'role:viewer', 'role:Support', 'group:Contractors']));
    expect(kinds).not.toContain('role:member');
    expect(review.created_by.type).toBe('api_key');
  });

  it('scopes a review to everyone when no scope is sent, or by role_id, group_id or entitlement_id; two of them is 400', async () => {
    const everyone = await start({ name: 'Everyone, by default' });
    expect(everyone.status).toBe(201);
    expect(everyone.body.data.scope).toEqual({ type: 'everyone', id: null, name: null });
    const groupId = (await call(app, 'GET', '/api/v1/iga/entitlements?type=group', { token: ws.apiKey })).body.data[0].id;
    const cases = [
      [{ role_id: roleIds.support }, { type: 'role', id: roleIds.support, name: 'Support' }],
      [{ group_id: groupId }, { type: 'group', id: groupId }],
      [{ entitlement_id: roleIds.support }, { type: 'role', id: roleIds.support }],
      [{ entitlement_id: groupId }, { type: 'group', id: groupId }],
    ] as const;
    for (const [shorthand, scope] of cases) {
      const res = await start({ name: 'Shorthand', ...shorthand });
      expect(res.status, JSON.stringify(shorthand)).toBe(201);
      expect(res.body.data.scope).toMatchObject(scope);
      const same = await start({ name: 'Spelled out', scope: { type: scope.type, id: scope.id } });
      expect(res.body.data.progress.total, JSON.stringify(shorthand)).toBe(same.body.data.progress.total);
    }
    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${everyone.body.data.id}`, { token: ws.apiKey });
    expect(audit.body.data[0]).toMatchObject({ event_type: 'access_review.start', details: { scope: { type: 'everyone', id: null } } });
    // The shorthand names what it says: a group id is no role, an unknown id no entitlement.
    expect((await start({ name: 'x', role_id: groupId })).status).toBe(404);
    expect((await start({ name: 'x', group_id: roleIds.support })).status).toBe(404);
    expect((await start({ name: 'x', entitlement_id: 'usr_00000000000000000000000000' })).status).toBe(404);
    const two = await start({ name: 'x', scope: { type: 'everyone' }, role_id: roleIds.support });
    expect([two.status, two.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(two.body.error.details).toEqual([
      { path: 'role_id', message: 'send one of scope, role_id, group_id, entitlement_id, not scope and role_id' },
    ]);
    expect((await start({ name: 'x', group_id: groupId, entitlement_id: groupId })).status).toBe(400);
  });

  it("takes a role's key wherever it takes a role id (role_id, entitlement_id, scope), as roles/assign does", async () => {
    const byId = await start({ name: 'Support by id', role_id: roleIds.support });
    for (const body of [{ role_id: 'support' }, { entitlement_id: 'support' }, { scope: { type: 'role', id: 'support' } }]) {
      const res = await start({ name: 'Support by key', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      // The review names the role by its id, as when the id was sent, and covers the same grants.
      expect(res.body.data.scope).toEqual({ type: 'role', id: roleIds.support, name: 'Support' });
      expect(res.body.data.progress.total).toBe(byId.body.data.progress.total);
    }
    const viewers = await start({ name: 'Viewers', role_id: 'viewer' });
    expect([viewers.status, viewers.body.data.scope.id]).toEqual([201, roleIds.viewer]);
    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${viewers.body.data.id}`, { token: ws.apiKey });
    expect(audit.body.data[0].details.scope).toEqual({ type: 'role', id: roleIds.viewer });
    expect((await start({ name: 'x', role_id: 'no-such-role' })).status).toBe(404);
    // A key names a role, never a group.
    expect((await start({ name: 'x', group_id: 'support' })).status).toBe(404);
  });

  it('completes a review of nothing at once', async () => {
    const empty = await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Unused', permissions: [] } });
    const review = await start({ name: 'Nobody', scope: { type: 'role', id: empty.body.data.id } });
    expect(review.body.data).toMatchObject({ status: 'completed', progress: { total: 0, decided: 0, percent: 100 } });
    // Completed at once is still completed: audited and announced as a last decision would be.
    const audit = await call(app, 'GET', `/api/v1/audit/events/?target_id=${review.body.data.id}&per_page=10`, { token: ws.apiKey });
    expect(audit.body.data.map((e: { event_type: string }) => e.event_type).sort()).toEqual([
      'access_review.complete',
      'access_review.start',
    ]);
    const events = await app.deps.orm.em
      .getConnection()
      .execute<{ type: string; payload: any }[]>(
        `select type, payload from events where workspace_id = ? and payload->>'id' = ? order by type`,
        [ws.id, review.body.data.id],
      );
    expect(events.map((e) => e.type)).toEqual(['access_review.completed', 'access_review.started']);
    expect(events[0]?.payload).toMatchObject({ id: review.body.data.id, progress: { total: 0, percent: 100 } });
  });

  it('keeps the owner rules: revoking the last owner is 409 and leaves the item undecided', async () => {
    // An owner until next year: an owner who may revoke owner, but not one who keeps the workspace owned.
    const interim = await person('interim');
    const until = new Date(app.clock.now().getTime() + 365 * 86_400_000).toISOString();
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ownerToken,
      body: { user_id: interim.id, role_id: roleIds.owner, expires_at: until },
    });
    interim.token = (await signIn(app, ws.id, interim.email, PASSWORD)).accessToken;
    const review = (await start({ name: 'Owners', scope: { type: 'role', id: roleIds.owner } })).body.data;
    const byUser = Object.fromEntries((await items(review.id)).body.data.map((i: { user: { id: string } }) => [i.user.id, i]));
    const item = byUser[ws.owner.id];
    // The last owner (the interim one's ownership ends) is 409 whoever decides, an admin too.
    const byAdmin = await decide(review.id, item.id, 'revoke');
    expect([byAdmin.status, byAdmin.body.error.code]).toEqual([409, 'CONFLICT']);
    const byOwner = await decide(review.id, item.id, 'revoke', interim.token);
    expect([byOwner.status, byOwner.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await items(review.id)).body.data.find((i: { id: string }) => i.id === item.id).decision).toBeNull();
    expect((await decide(review.id, item.id, 'keep', interim.token)).status).toBe(200);
    expect((await decide(review.id, byUser[interim.id].id, 'keep', ownerToken)).body.data.review.status).toBe('completed');
  });

  it('lets a reviewer revoke only what they could grant: iga:write alone takes no admin or owner away', async () => {
    roleIds.governor = (
      await call(app, 'POST', '/api/v1/roles', {
        token: ws.apiKey,
        body: { name: 'Governor', key: 'governor', permissions: ['iga:read', 'iga:write'] },
      })
    ).body.data.id;
    const governor = await person('governor', 'governor');
    const other = await person('other-admin', 'admin');
    const second = await person('second-owner');
    await call(app, 'POST', '/api/v1/roles/assign', { token: ownerToken, body: { user_id: second.id, role_id: roleIds.owner } });
    const peer = await person('peer', 'governor');
    const review = (await start({ name: 'Everyone, by a governor' }, governor.token)).body.data;
    const all = (await items(review.id)).body.data as { id: string; user: { id: string }; entitlement: { id: string } }[];
    const itemOf = (userId: string, roleId: string | undefined) => {
      const item = all.find((i) => i.user.id === userId && i.entitlement.id === roleId);
      if (!item) throw new Error(`no item for ${userId} and ${roleId}`);
      return item;
    };
    for (const item of [itemOf(other.id, roleIds.admin), itemOf(second.id, roleIds.owner)]) {
      const res = await decide(review.id, item.id, 'revoke', governor.token);
      expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
      const row = await call(app, 'GET', `/api/v1/audit/events/?event_type=access_review.decide&outcome=failure`, { token: ws.apiKey });
      expect(row.body.data[0]).toMatchObject({ actor: { id: governor.id }, details: { reason: 'FORBIDDEN', status: 403 } });
    }
    const held = async (userId: string) =>
      (await call(app, 'GET', `/api/v1/users/${userId}/roles`, { token: ws.apiKey })).body.data.map((r: { key: string }) => r.key);
    expect(await held(other.id)).toContain('admin');
    expect(await held(second.id)).toContain('owner');
    expect((await items(review.id, '&decision=pending')).body.data.map((i: { id: string }) => i.id)).toEqual(
      expect.arrayContaining([itemOf(other.id, roleIds.admin).id, itemOf(second.id, roleIds.owner).id]),
    );
    // What the governor holds every permission of, it may revoke; an admin revokes the admin.
    expect((await decide(review.id, itemOf(peer.id, roleIds.governor).id, 'revoke', governor.token)).status).toBe(200);
    expect(await held(peer.id)).not.toContain('governor');
    expect((await decide(review.id, itemOf(other.id, roleIds.admin).id, 'revoke')).status).toBe(200);
    expect(await held(other.id)).not.toContain('admin');
  });

  it('refuses reviewing your own access (403), audited; someone else decides it', async () => {
    // A reviewer (an admin: iga:write) whose own Support grant is under review.
    const lead = await person('lead', 'support', 'admin');
    const review = (await start({ name: 'Support leads', scope: { type: 'role', id: roleIds.support } })).body.data;
    const own = (await items(review.id)).body.data.find((i: { user: { id: string } }) => i.user.id === lead.id);
    for (const decision of ['keep', 'revoke']) {
      const self = await decide(review.id, own.id, decision, lead.token);
      expect([self.status, self.body.error?.code]).toEqual([403, 'FORBIDDEN']);
      const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=access_review.decide&outcome=failure&per_page=100', {
        token: ws.apiKey,
      });
      const row = failures.body.data.find((e: { request_id: string }) => e.request_id === self.headers.get('x-request-id'));
      expect(row).toMatchObject({ actor: { type: 'user', id: lead.id }, details: { reason: 'FORBIDDEN', status: 403 } });
    }
    expect((await items(review.id)).body.data.find((i: { id: string }) => i.id === own.id).decision).toBeNull();
    const roles = await call(app, 'GET', `/api/v1/users/${lead.id}/roles`, { token: ws.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key)).toContain('support');
    expect((await decide(review.id, own.id, 'keep')).body.data.item).toMatchObject({ decision: 'keep', decided_by: { id: admin.id } });
  });

  it('refuses bad scopes, unknown reviews and items, and items of another review', async () => {
    for (const body of [
      { name: 'x', scope: { type: 'application', id: 'app_00000000000000000000000000' } },
      { name: 'x', scope: { type: 'role' } },
      { name: '', scope: { type: 'everyone' } },
      { name: 'x', scope: { type: 'everyone' }, due_at: 'soon' },
    ]) {
      expect((await start(body)).status, JSON.stringify(body)).toBe(400);
    }
    for (const due of [new Date(app.clock.now().getTime() - 60_000), app.clock.now()]) {
      const past = await start({ name: 'Overdue', scope: { type: 'everyone' }, due_at: due.toISOString() });
      expect([past.status, past.body.error.code, past.body.error.details]).toEqual([
        400,
        'BAD_REQUEST',
        [{ path: 'due_at', message: 'must be in the future' }],
      ]);
    }
    expect(
      (await call(app, 'GET', '/api/v1/iga/reviews?per_page=100', { token: ws.apiKey })).body.data.map((r: { name: string }) => r.name),
    ).not.toContain('Overdue');
    expect((await start({ name: 'x', scope: { type: 'role', id: 'rol_00000000000000000000000000' } })).status).toBe(404);
    const groupId = (await call(app, 'GET', '/api/v1/iga/entitlements?type=group', { token: ws.apiKey })).body.data[0].id;
    expect((await start({ name: 'x', scope: { type: 'role', id: groupId } })).status).toBe(404);

    const a = (await start({ name: 'A', scope: { type: 'role', id: roleIds.admin } })).body.data;
    const b = (await start({ name: 'B', scope: { type: 'role', id: roleIds.viewer } })).body.data;
    const [itemOfA] = (await items(a.id)).body.data;
    expect((await decide(b.id, itemOfA.id, 'keep')).status).toBe(404);
    expect((await decide('rev_00000000000000000000000000', itemOfA.id, 'keep')).status).toBe(404);
    expect((await decide(a.id, 'rvi_00000000000000000000000000', 'keep')).status).toBe(404);
    expect((await decide(a.id, itemOfA.id, 'maybe')).status).toBe(400);
    expect((await call(app, 'GET', '/api/v1/iga/reviews/rev_00000000000000000000000000/items', { token: ws.apiKey })).status).toBe(404);
  });

  it('lets viewers read reviews and items, not start or decide; members neither', async () => {
    const review = (await start({ name: 'Visible', scope: { type: 'role', id: roleIds.viewer } })).body.data;
    const [item] = (await items(review.id)).body.data;
    expect((await call(app, 'GET', '/api/v1/iga/reviews', { token: viewer.token })).status).toBe(200);
    expect((await call(app, 'GET', `/api/v1/iga/reviews/${review.id}/items`, { token: viewer.token })).status).toBe(200);
    expect((await start({ name: 'by viewer', scope: { type: 'everyone' } }, viewer.token)).status).toBe(403);
    expect((await decide(review.id, item.id, 'revoke', viewer.token)).status).toBe(403);
    const member = await person('member');
    for (const path of ['/api/v1/iga/reviews', `/api/v1/iga/reviews/${review.id}`, `/api/v1/iga/reviews/${review.id}/items`]) {
      expect((await call(app, 'GET', path, { token: member.token })).status, path).toBe(403);
    }
  });

  it('reports reviews with their progress, and requests, over GraphQL', async () => {
    const res = await graphql(
      app,
      `
        {
          accessReviews(perPage: 50) {
            data {
              id
              name
              status
              scope {
                type
                name
              }
              progress {
                total
                decided
                kept
                revoked
                percent
              }
            }
            meta {
              total
            }
          }
          completed: accessReviews(status: completed) {
            meta {
              total
            }
          }
          accessRequests {
            meta {
              total
            }
          }
        }
      `,
      {},
      viewer.token,
    );
    expect(res.body.errors).toBeUndefined();
    const reviews = res.body.data.accessReviews.data;
    const q4 = reviews.find((r: { name: string }) => r.name === 'Q4 support access');
    expect(q4).toMatchObject({
      status: 'completed',
      scope: { type: 'role', name: 'Support' },
      progress: { total: 2, decided: 2, kept: 1, revoked: 1, percent: 100 },
    });
    const contractors = reviews.find((r: { name: string }) => r.name === 'Contractors');
    expect(contractors.progress).toEqual({ total: 3, decided: 1, kept: 0, revoked: 1, percent: 33 });
    expect(res.body.data.completed.meta.total).toBeGreaterThanOrEqual(3);
    const itemsRes = await graphql(
      app,
      `
        query ($id: ID!) {
          accessReviewItems(reviewId: $id, state: pending) {
            data {
              user {
                email
              }
              entitlement {
                type
                name
              }
              decision
            }
            meta {
              total
            }
          }
        }
      `,
      { id: contractors.id },
      viewer.token,
    );
    expect(itemsRes.body.data.accessReviewItems.meta.total).toBe(2);
  });
});
