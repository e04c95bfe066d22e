import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { toldEvents } from '../../../test/helpers/events.ts';

const PASSWORD = 'role test passphrase';

describe('roles: built-in and custom, assign and revoke, owners', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let roleIds: Record<string, string>;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    roleIds = Object.fromEntries(roles.body.data.map((r: { key: string; id: string }) => [r.key, r.id]));
  });
  afterAll(() => app.close());

  async function userWith(role?: string) {
    const email = uniqueEmail(role ?? 'member');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    const id = created.body.data.id as string;
    if (role) {
      const token = role === 'owner' ? (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken : ws.apiKey;
      expect((await call(app, 'POST', '/api/v1/roles/assign', { token, body: { user_id: id, role_id: roleIds[role] } })).status).toBe(201);
    }
    return { id, email, token: (await signIn(app, ws.id, email, PASSWORD)).accessToken };
  }

  it('lists the four built-in roles of a new workspace, paged', async () => {
    const res = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ page: 1, per_page: 20 });
    expect(
      res.body.data
        .filter((r: { builtin: boolean }) => r.builtin)
        .map((r: { key: string }) => r.key)
        .sort(),
    ).toEqual(['admin', 'member', 'owner', 'viewer']);
    // Named by the CONTRACT's identifiers, so a lookup by name finds them too.
    const builtin = res.body.data.filter((r: { builtin: boolean }) => r.builtin);
    expect(builtin.every((r: { key: string; name: string }) => r.name === r.key)).toBe(true);
  });

  it('searches roles by name or description (q in NFC, as labels are kept; LIKE wildcards literal) on REST, tRPC and GraphQL', async () => {
    const own = await createWorkspace(app);
    const create = async (body: Record<string, unknown>) => {
      const res = await call(app, 'POST', '/api/v1/roles', { token: own.apiKey, body });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const facade = await create({ name: 'Équipe Façade', key: 'facade' });
    const ledger = await create({ name: 'Bookkeepers', description: 'Reads the LEDGER at 50% of the year' });
    await create({ name: 'Support', description: 'Answers tickets' });
    const found = async (q: string) => {
      const res = await call(app, 'GET', `/api/v1/roles?q=${encodeURIComponent(q)}`, { token: own.apiKey });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return [res.body.meta.total, res.body.data.map((r: { id: string }) => r.id)];
    };
    for (const q of ['E\u0301quipe', 'équipe fac\u0327ade', '  ÉQUIPE ']) expect([q, ...(await found(q))]).toEqual([q, 1, [facade]]);
    expect(await found('ledger')).toEqual([1, [ledger]]);
    expect(await found('50%')).toEqual([1, [ledger]]);
    expect(await found('s%')).toEqual([0, []]);
    expect(await found('_')).toEqual([0, []]);
    // Built-in roles are found by their names too; an empty q is no filter.
    expect(await found('viewer')).toEqual([1, [expect.stringMatching(/^rol_/)]]);
    expect((await found(''))[0]).toBe(7);

    const viaTrpc = await trpc(app, 'query', 'roles.list', { q: 'bookkeep' }, own.apiKey);
    expect(viaTrpc.body.result.data.data.map((r: { id: string }) => r.id)).toEqual([ledger]);
    const viaGraphql = await graphql(
      app,
      'query ($q: String) { roles(q: $q) { data { id } meta { total } } }',
      { q: 'E\u0301quipe' },
      own.apiKey,
    );
    expect(viaGraphql.body.data.roles).toEqual({ data: [{ id: facade }], meta: { total: 1 } });
    const tooLong = await call(app, 'GET', `/api/v1/roles?q=${'x'.repeat(201)}`, { token: own.apiKey });
    expect([tooLong.status, tooLong.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it("lists a user's roles as roles, paged, and takes a role's key where an id is asked", async () => {
    const user = await userWith();
    const assigned = await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.id, role_id: 'viewer' } });
    expect(assigned.status).toBe(201);
    expect(assigned.body.data).toMatchObject({ user_id: user.id, role_id: roleIds.viewer, role: { key: 'viewer' }, expires_at: null });

    const listed = await call(app, 'GET', `/api/v1/users/${user.id}/roles`, { token: ws.apiKey });
    expect(listed.body.meta).toEqual({ total: 2, page: 1, per_page: 20 });
    expect(
      listed.body.data
        .map((r: { id: string; role_id: string; key: string; name: string }) => [r.id, r.role_id, r.key, r.name])
        .sort((x: string[], y: string[]) => String(x[2]).localeCompare(String(y[2]))),
    ).toEqual([
      [roleIds.member, roleIds.member, 'member', 'member'],
      [roleIds.viewer, roleIds.viewer, 'viewer', 'viewer'],
    ]);
    expect(listed.body.data.find((r: { key: string }) => r.key === 'viewer')).toMatchObject({
      user_id: user.id,
      expires_at: null,
      builtin: true,
    });
    const first = await call(app, 'GET', `/api/v1/users/${user.id}/roles?page=1&per_page=1`, { token: ws.apiKey });
    const second = await call(app, 'GET', `/api/v1/users/${user.id}/roles?page=2&per_page=1`, { token: ws.apiKey });
    expect(second.body.meta).toEqual({ total: 2, page: 2, per_page: 1 });
    expect([first.body.data[0].key, second.body.data[0].key].sort()).toEqual(['member', 'viewer']);
    for (const query of ['page=0', 'per_page=101', 'per_page=abc']) {
      expect((await call(app, 'GET', `/api/v1/users/${user.id}/roles?${query}`, { token: ws.apiKey })).status).toBe(400);
    }

    const revoked = await call(app, 'POST', '/api/v1/roles/revoke', { token: ws.apiKey, body: { user_id: user.id, role_id: 'viewer' } });
    expect(revoked.body.data).toEqual({ user_id: user.id, role_id: roleIds.viewer, revoked: true });
    const unknown = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: 'no-such-role' },
    });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it('takes expires_at as a timestamp with or without an offset, or as a date', async () => {
    const user = await userWith();
    let held = false;
    const until = async (expires_at: string) => {
      const res = await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: user.id, role_id: roleIds.viewer, expires_at },
      });
      // The first grants the role (201); the others move its end (200).
      expect(res.status).toBe(held ? 200 : 201);
      held = true;
      return res.body.data.expires_at;
    };
    expect(await until('2999-01-02')).toBe('2999-01-02T00:00:00.000Z');
    expect(await until('2999-01-02T03:04:05')).toBe('2999-01-02T03:04:05.000Z');
    expect(await until('2999-01-02T03:04:05+02:00')).toBe('2999-01-02T01:04:05.000Z');
    for (const bad of ['2999-13-01', 'tomorrow', '2999-01-02T25:00:00']) {
      const res = await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: user.id, role_id: roleIds.viewer, expires_at: bad },
      });
      expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('creates a custom role whose permissions take effect at once, and deletes it', async () => {
    const created = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: 'User auditor', permissions: ['users:read'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ key: 'user-auditor', builtin: false, permissions: ['users:read'] });
    const user = await userWith();
    expect((await call(app, 'GET', '/api/v1/users', { token: user.token })).status).toBe(403);
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.id, role_id: created.body.data.id } });
    expect((await call(app, 'GET', '/api/v1/users', { token: user.token })).status).toBe(200);
    expect(
      (await call(app, 'POST', '/api/v1/users', { token: user.token, body: { email: uniqueEmail(), password: PASSWORD } })).status,
    ).toBe(403);

    const dup = await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'User auditor' } });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'CONFLICT']);
    // The key was made from the name: the name is the field to change.
    expect(dup.body.error.details).toEqual([{ path: 'name', message: 'is already taken' }]);
    const dupKey = await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Another', key: 'user-auditor' } });
    expect([dupKey.status, dupKey.body.error.details]).toEqual([409, [{ path: 'key', message: 'is already taken' }]]);
    const bad = await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'X', permissions: ['users:destroy'] } });
    expect(bad.status).toBe(400);

    const deleted = await call(app, 'DELETE', `/api/v1/roles/${created.body.data.id}`, { token: ws.apiKey });
    expect(deleted.body.data).toEqual({ id: created.body.data.id, deleted: true });
    expect((await call(app, 'GET', '/api/v1/users', { token: user.token })).status).toBe(403);
  });

  it('makes a key for a name in any script: names ASCII cannot spell get keys of their own, the same name still 409', async () => {
    const create = (name: string) => call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name } });
    const keys: string[] = [];
    for (const name of ['Бухгалтерия', 'Маркетинг', '日本語チーム', 'Ops 日本', 'Ops 中国']) {
      const created = await create(name);
      expect([name, created.status]).toEqual([name, 201]);
      expect(created.body.data.key).toMatch(/^[a-z][a-z0-9_-]{1,49}$/);
      const read = await call(app, 'GET', `/api/v1/roles/${created.body.data.key}`, { token: ws.apiKey });
      expect(read.body.data).toMatchObject({ id: created.body.data.id, name });
      keys.push(created.body.data.key);
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys[3]).toMatch(/^ops-[0-9a-f]{8}$/);
    // Accents are dropped, so a name in a Latin script keeps a readable key.
    expect((await create('Équipe paie')).body.data.key).toBe('equipe-paie');

    const again = await create('БУХГАЛТЕРИЯ');
    expect([again.status, again.body.error.code, again.body.error.details]).toEqual([
      409,
      'CONFLICT',
      [{ path: 'name', message: 'is already taken' }],
    ]);
  });

  it('refuses to delete built-in roles (409)', async () => {
    const res = await call(app, 'DELETE', `/api/v1/roles/${roleIds.admin}`, { token: ws.apiKey });
    expect([res.status, res.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('stops an expiring assignment from granting at its expires_at', async () => {
    const user = await userWith();
    const expiresAt = new Date(app.clock.now().getTime() + 60_000).toISOString();
    const assigned = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: roleIds.viewer, expires_at: expiresAt },
    });
    expect(assigned.body.data).toMatchObject({ user_id: user.id, role: { key: 'viewer' }, expires_at: expiresAt });
    expect((await call(app, 'GET', '/api/v1/users', { token: user.token })).status).toBe(200);
    const roles = await call(app, 'GET', `/api/v1/users/${user.id}/roles`, { token: ws.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key).sort()).toEqual(['member', 'viewer']);

    app.clock.advance(60_000);
    expect((await call(app, 'GET', '/api/v1/users', { token: user.token })).status).toBe(403);
    const after = await call(app, 'GET', `/api/v1/users/${user.id}/roles`, { token: ws.apiKey });
    expect(after.body.data.map((r: { key: string }) => r.key)).toEqual(['member']);
    const past = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: roleIds.viewer, expires_at: new Date(app.clock.now().getTime() - 1000).toISOString() },
    });
    expect(past.status).toBe(400);
  });

  it('answers revoking an expired assignment as revoking a role never held: 404; only its lapse is told', async () => {
    const user = await userWith();
    const never = await call(app, 'POST', '/api/v1/roles/revoke', { token: ws.apiKey, body: { user_id: user.id, role_id: roleIds.admin } });
    expect([never.status, never.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const expiresAt = new Date(app.clock.now().getTime() + 60_000).toISOString();
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: roleIds.viewer, expires_at: expiresAt },
    });
    app.clock.advance(60_000);
    const expired = await call(app, 'POST', '/api/v1/roles/revoke', {
      token: ws.apiKey,
      body: { user_id: user.id, role_id: roleIds.viewer },
    });
    expect([expired.status, expired.body.error]).toEqual([404, never.body.error]);
    await app.deps.roleLapses.tick();
    expect(await toldEvents(app, ws.id, 'role.revoked', user.id)).toEqual([
      expect.objectContaining({ reason: 'expired', expires_at: expiresAt }),
    ]);
    // Assigning it again grants it afresh, and then it can be revoked.
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.id, role_id: roleIds.viewer } })).status,
    ).toBe(201);
    const live = await call(app, 'POST', '/api/v1/roles/revoke', { token: ws.apiKey, body: { user_id: user.id, role_id: roleIds.viewer } });
    expect(live.body.data).toEqual({ user_id: user.id, role_id: roleIds.viewer, revoked: true });
  });

  it('answers a body id that is too long as an unknown one, 404 on every door; other members keep their 400', async () => {
    const user = await userWith();
    const long = `usr_${'x'.repeat(300)}`;
    const unknown = 'usr_00000000000000000000000000';
    for (const path of ['/api/v1/roles/assign', '/api/v1/roles/revoke']) {
      for (const body of [
        { user_id: long, role_id: roleIds.viewer },
        { user_id: user.id, role_id: 'r'.repeat(300) },
        { user_id: unknown, role_id: roleIds.viewer },
      ]) {
        const res = await call(app, 'POST', path, { token: ws.apiKey, body });
        expect([res.status, res.body.error.code], `${path} ${JSON.stringify(body).slice(0, 60)}`).toEqual([404, 'NOT_FOUND']);
      }
      // A missing id, one that is not a string, or a bad member beside it stays the caller's 400.
      for (const body of [
        { user_id: user.id },
        { user_id: 12, role_id: roleIds.viewer },
        { user_id: long, role_id: roleIds.viewer, extra: 1 },
      ]) {
        const res = await call(app, 'POST', path, { token: ws.apiKey, body });
        expect([res.status, res.body.error.code], `${path} ${JSON.stringify(body).slice(0, 60)}`).toEqual([400, 'BAD_REQUEST']);
      }
    }
    const viaTrpc = await trpc(app, 'mutation', 'roles.assign', { user_id: long, role_id: roleIds.viewer }, ws.apiKey);
    expect(viaTrpc.body.error.data.appCode).toBe('NOT_FOUND');
    const tooLate = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: long, role_id: roleIds.viewer, expires_at: 'x'.repeat(300) },
    });
    expect(tooLate.status).toBe(400);
    // Members of groups and organizations, and invitations' roles, answer alike.
    const group = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Long ids' } });
    const org = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Long Ids Inc' } });
    for (const [path, body] of [
      [`/api/v1/groups/${group.body.data.id}/members`, { user_id: long }],
      [`/api/v1/groups/${group.body.data.id}/members`, { user_id: unknown }],
      [`/api/v1/organizations/${org.body.data.id}/members`, { user_id: long }],
      [`/api/v1/organizations/${org.body.data.id}/members`, { user_id: unknown }],
      ['/api/v1/organizations/portal-link', { organization_id: `org_${'x'.repeat(300)}` }],
      ['/api/v1/organizations/portal-link', { organization_id: 'org_00000000000000000000000000' }],
      ['/api/v1/invitations', { email: uniqueEmail('long-role'), role_id: 'r'.repeat(300) }],
      ['/api/v1/invitations', { email: uniqueEmail('unknown-role'), role_id: 'no-such-role' }],
    ] as const) {
      const res = await call(app, 'POST', path, { token: ws.apiKey, body });
      expect([res.status, res.body.error.code], `${path} ${JSON.stringify(body).slice(0, 60)}`).toEqual([404, 'NOT_FOUND']);
    }
  });

  it('tells role.assigned only when an assignment changes: a repeat is no event, and its audit row says so; a grant is 201, the rest 200', async () => {
    const user = await userWith();
    const assign = (expires_at?: string) =>
      call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: user.id, role_id: roleIds.viewer, ...(expires_at ? { expires_at } : {}) },
      });
    const soon = new Date(app.clock.now().getTime() + 60_000).toISOString();
    const later = new Date(app.clock.now().getTime() + 120_000).toISOString();
    const statuses = [];
    const grantedAt = app.clock.now().toISOString();
    for (const expires of [undefined, undefined, soon, soon]) {
      const res = await assign(expires);
      statuses.push(res.status);
      expect(res.body.data.assigned_at).toBe(grantedAt);
    }
    // A new grant is created (201); the same again, or a new end for a role held, is 200.
    expect(statuses).toEqual([201, 200, 200, 200]);
    // Expired, then given again: held anew, a grant again, assigned now.
    app.clock.advance(61_000);
    const regranted = await assign(later);
    expect([regranted.status, regranted.body.data.assigned_at]).toEqual([201, app.clock.now().toISOString()]);

    const em = app.deps.orm.em.fork().getConnection();
    const events = await toldEvents(app, ws.id, 'role.assigned', user.id);
    expect(events.map((e) => e.expires_at)).toEqual([null, soon, later]);
    const audited = await em.execute<{ details: { change: string } }[]>(
      `select details from audit_events where workspace_id = ? and event_type = 'role.assign' and target_id = ? order by created_at, id`,
      [ws.id, user.id],
    );
    expect(audited.map((a) => a.details.change)).toEqual(['granted', 'none', 'expires_at', 'none', 'granted']);
  });

  it('lets viewers read roles but not change them; members neither', async () => {
    const viewer = await userWith('viewer');
    expect((await call(app, 'GET', '/api/v1/roles', { token: viewer.token })).status).toBe(200);
    expect((await call(app, 'POST', '/api/v1/roles', { token: viewer.token, body: { name: 'Nope' } })).status).toBe(403);
    const member = await userWith();
    expect((await call(app, 'GET', '/api/v1/roles', { token: member.token })).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/roles')).status).toBe(401);
  });

  it('lets only an owner grant or revoke owner', async () => {
    const admin = await userWith('admin');
    const target = await userWith();
    const body = { user_id: target.id, role_id: roleIds.owner };
    const byAdmin = await call(app, 'POST', '/api/v1/roles/assign', { token: admin.token, body });
    expect([byAdmin.status, byAdmin.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body })).status).toBe(403);
    const owner = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect((await call(app, 'POST', '/api/v1/roles/assign', { token: owner.accessToken, body })).status).toBe(201);
    expect((await call(app, 'POST', '/api/v1/roles/revoke', { token: admin.token, body })).status).toBe(403);
    expect((await call(app, 'POST', '/api/v1/roles/revoke', { token: owner.accessToken, body })).status).toBe(200);
    const again = await call(app, 'POST', '/api/v1/roles/revoke', { token: owner.accessToken, body });
    expect(again.status).toBe(404);
  });

  it('never loses the last owner, even when two owners revoke each other at once', async () => {
    const fresh = await createWorkspace(app);
    const owner = await signIn(app, fresh.id, fresh.owner.email, fresh.owner.password);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: fresh.apiKey });
    const ownerRole = roles.body.data.find((r: { key: string }) => r.key === 'owner').id;
    const alone = await call(app, 'POST', '/api/v1/roles/revoke', {
      token: owner.accessToken,
      body: { user_id: fresh.owner.id, role_id: ownerRole },
    });
    expect([alone.status, alone.body.error.code]).toEqual([409, 'CONFLICT']);
    // The last owner is 409 whoever asks: an API key or an admin too, before their lack of ownership.
    const byKey = await call(app, 'POST', '/api/v1/roles/revoke', {
      token: fresh.apiKey,
      body: { user_id: fresh.owner.id, role_id: ownerRole },
    });
    expect([byKey.status, byKey.body.error.code]).toEqual([409, 'CONFLICT']);
    // Nor by an end date on the only ownership without one.
    const ending = await call(app, 'POST', '/api/v1/roles/assign', {
      token: owner.accessToken,
      body: { user_id: fresh.owner.id, role_id: ownerRole, expires_at: new Date(app.clock.now().getTime() + 60_000).toISOString() },
    });
    expect([ending.status, ending.body.error.code]).toEqual([409, 'CONFLICT']);

    const email = uniqueEmail('second-owner');
    const second = await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email, password: PASSWORD } });
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: owner.accessToken,
      body: { user_id: second.body.data.id, role_id: ownerRole },
    });
    const secondToken = (await signIn(app, fresh.id, email, PASSWORD)).accessToken;
    const results = await Promise.all([
      call(app, 'POST', '/api/v1/roles/revoke', { token: owner.accessToken, body: { user_id: second.body.data.id, role_id: ownerRole } }),
      call(app, 'POST', '/api/v1/roles/revoke', { token: secondToken, body: { user_id: fresh.owner.id, role_id: ownerRole } }),
    ]);
    // One wins. The other is refused: 409 when both passed authorization before either committed,
    // 403 when the winner's revocation had already taken its owner role away.
    const statuses = results.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([403, 409]).toContain(statuses[1]);
    const owners = await Promise.all(
      [fresh.owner.id, second.body.data.id].map((id) => call(app, 'GET', `/api/v1/users/${id}/roles`, { token: fresh.apiKey })),
    );
    const stillOwners = owners.filter((r) => r.body.data.some((role: { key: string }) => role.key === 'owner'));
    expect(stillOwners).toHaveLength(1);
  });

  it('keeps an owner without an end date: an owner whose ownership ends does not count', async () => {
    const fresh = await createWorkspace(app);
    const owner = await signIn(app, fresh.id, fresh.owner.email, fresh.owner.password);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: fresh.apiKey });
    const ownerRole = roles.body.data.find((r: { key: string }) => r.key === 'owner').id;
    const email = uniqueEmail('temporary-owner');
    const temporary = await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email, password: PASSWORD } });
    const until = new Date(app.clock.now().getTime() + 60_000).toISOString();
    const granted = await call(app, 'POST', '/api/v1/roles/assign', {
      token: owner.accessToken,
      body: { user_id: temporary.body.data.id, role_id: ownerRole, expires_at: until },
    });
    expect(granted.status).toBe(201);
    const temporaryToken = (await signIn(app, fresh.id, email, PASSWORD)).accessToken;
    // Revoking, deleting or deactivating the permanent owner would leave none once the other ends.
    const attempts = [
      call(app, 'POST', '/api/v1/roles/revoke', { token: temporaryToken, body: { user_id: fresh.owner.id, role_id: ownerRole } }),
      call(app, 'DELETE', `/api/v1/users/${fresh.owner.id}`, { token: fresh.apiKey }),
      call(app, 'PATCH', `/api/v1/users/${fresh.owner.id}`, { token: fresh.apiKey, body: { status: 'deactivated' } }),
    ];
    for (const refused of await Promise.all(attempts)) expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    // The owner with an end date can still be taken away.
    const revoked = await call(app, 'POST', '/api/v1/roles/revoke', {
      token: owner.accessToken,
      body: { user_id: temporary.body.data.id, role_id: ownerRole },
    });
    expect(revoked.status).toBe(200);
  });

  /** A fresh workspace with its owner signed in, an admin, and the owner role's id. */
  async function ownedWorkspace() {
    const fresh = await createWorkspace(app);
    const owner = (await signIn(app, fresh.id, fresh.owner.email, fresh.owner.password)).accessToken;
    const roles = await call(app, 'GET', '/api/v1/roles', { token: fresh.apiKey });
    const roleOf = (key: string): string => roles.body.data.find((r: { key: string }) => r.key === key).id;
    const newUser = async (role?: string) => {
      const email = uniqueEmail(role ?? 'member');
      const created = await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email, password: PASSWORD } });
      const id = created.body.data.id as string;
      if (role) {
        const token = role === 'owner' ? owner : fresh.apiKey;
        expect((await call(app, 'POST', '/api/v1/roles/assign', { token, body: { user_id: id, role_id: roleOf(role) } })).status).toBe(201);
      }
      return { id, email, token: (await signIn(app, fresh.id, email, PASSWORD)).accessToken };
    };
    return { fresh, owner, roleOf, newUser };
  }

  it("lets only an owner change an owner's email, deactivate or delete an owner; admins and keys manage the rest", async () => {
    const { fresh, owner, newUser } = await ownedWorkspace();
    const second = await newUser('owner');
    const admin = await newUser('admin');
    const user = (id: string) => `/api/v1/users/${id}`;
    // An admin who could set an owner's email could reset that owner's password and sign in as them.
    for (const token of [admin.token, fresh.apiKey]) {
      for (const [method, body] of [
        ['PATCH', { email: uniqueEmail('takeover') }],
        ['PATCH', { status: 'deactivated' }],
        ['DELETE', undefined],
      ] as const) {
        const refused = await call(app, method, user(second.id), { token, body });
        expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
      }
    }
    // The same on the first owner, and nothing changed.
    const onFirst = await call(app, 'PATCH', user(fresh.owner.id), { token: admin.token, body: { email: uniqueEmail('takeover') } });
    expect(onFirst.status).toBe(403);
    const read = await call(app, 'GET', user(second.id), { token: fresh.apiKey });
    expect(read.body.data).toMatchObject({ email: second.email, status: 'active' });
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=user.update&outcome=failure', { token: fresh.apiKey });
    expect(audit.body.meta.total).toBeGreaterThanOrEqual(3);
    // What takes nothing from an owner stays an admin's: a name, and an unlock or reactivation.
    expect((await call(app, 'PATCH', user(second.id), { token: admin.token, body: { name: 'Second Owner' } })).status).toBe(200);
    // An owner may do all of it to another owner.
    const email = uniqueEmail('second-owner');
    expect((await call(app, 'PATCH', user(second.id), { token: owner, body: { email } })).body.data.email).toBe(email);
    expect((await call(app, 'PATCH', user(second.id), { token: owner, body: { status: 'deactivated' } })).status).toBe(200);
    expect((await call(app, 'PATCH', user(second.id), { token: admin.token, body: { status: 'active' } })).status).toBe(200);
    expect((await call(app, 'DELETE', user(second.id), { token: owner })).status).toBe(200);
  });

  it('counts only active owners: a deactivated owner is not the one that keeps the workspace owned', async () => {
    const { fresh, owner, roleOf, newUser } = await ownedWorkspace();
    const second = await newUser('owner');
    expect((await call(app, 'PATCH', `/api/v1/users/${second.id}`, { token: owner, body: { status: 'deactivated' } })).status).toBe(200);
    const revoke = { user_id: fresh.owner.id, role_id: roleOf('owner') };
    const attempts = [
      await call(app, 'POST', '/api/v1/roles/revoke', { token: owner, body: revoke }),
      await call(app, 'PATCH', `/api/v1/users/${fresh.owner.id}`, { token: owner, body: { status: 'deactivated' } }),
      await call(app, 'DELETE', `/api/v1/users/${fresh.owner.id}`, { token: owner }),
    ];
    for (const refused of attempts) expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    // Once the second owner is active again, the first may step down.
    await call(app, 'PATCH', `/api/v1/users/${second.id}`, { token: fresh.apiKey, body: { status: 'active' } });
    expect((await call(app, 'POST', '/api/v1/roles/revoke', { token: owner, body: revoke })).status).toBe(200);
  });

  it('lets nobody hand out more than they hold: roles, invitations and API keys', async () => {
    const { fresh, roleOf, newUser } = await ownedWorkspace();
    const createRole = async (name: string, permissions: string[]) => {
      const res = await call(app, 'POST', '/api/v1/roles', { token: fresh.apiKey, body: { name, permissions } });
      expect(res.status).toBe(201);
      return res.body.data.id as string;
    };
    const roleManager = await createRole('Role manager', ['roles:read', 'roles:write', 'users:read', 'users:write', 'api_keys:write']);
    const readsUsers = await createRole('User reader', ['users:read']);
    const manager = await newUser();
    await call(app, 'POST', '/api/v1/roles/assign', { token: fresh.apiKey, body: { user_id: manager.id, role_id: roleManager } });
    const target = await newUser();
    const assign = (user_id: string, role_id: string) =>
      call(app, 'POST', '/api/v1/roles/assign', { token: manager.token, body: { user_id, role_id } });
    // admin grants everything, viewer every read: both more than the manager holds, themselves included.
    for (const [userId, roleId] of [
      [manager.id, roleOf('admin')],
      [target.id, roleOf('admin')],
      [target.id, roleOf('viewer')],
    ] as const) {
      const refused = await assign(userId, roleId);
      expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    }
    expect((await assign(target.id, readsUsers)).status).toBe(201);
    expect((await assign(target.id, roleManager)).status).toBe(201);
    // An invitation hands out its role too.
    const invite = (role_id: string) =>
      call(app, 'POST', '/api/v1/invitations', { token: manager.token, body: { email: uniqueEmail('invitee'), role_id } });
    expect((await invite(roleOf('admin'))).status).toBe(403);
    expect((await invite(readsUsers)).status).toBe(201);
    // A key acts with admin rights, so api_keys:write alone does not make one.
    const key = await call(app, 'POST', '/api/v1/api-keys', { token: manager.token, body: { name: 'escape hatch' } });
    expect([key.status, key.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const admin = await newUser('admin');
    expect((await call(app, 'POST', '/api/v1/api-keys', { token: admin.token, body: { name: 'backend' } })).status).toBe(201);
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: admin.token, body: { user_id: target.id, role_id: roleOf('admin') } }))
        .status,
    ).toBe(201);
    // Nor does anyone take away more than they hold: the manager cannot demote an admin.
    const revoke = (user_id: string, role_id: string) =>
      call(app, 'POST', '/api/v1/roles/revoke', { token: manager.token, body: { user_id, role_id } });
    for (const userId of [admin.id, target.id]) {
      const refused = await revoke(userId, roleOf('admin'));
      expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    }
    const roles = await call(app, 'GET', `/api/v1/users/${admin.id}/roles`, { token: fresh.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key)).toContain('admin');
    expect((await revoke(target.id, readsUsers)).status).toBe(200);
    // Deleting a role takes it from all who hold it: a role granting more than the manager holds stays.
    const auditor = await createRole('Auditor', ['audit:read', 'users:read']);
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: fresh.apiKey, body: { user_id: target.id, role_id: auditor } })).status,
    ).toBe(201);
    const refused = await call(app, 'DELETE', `/api/v1/roles/${auditor}`, { token: manager.token });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const held = await call(app, 'GET', `/api/v1/users/${target.id}/roles`, { token: fresh.apiKey });
    expect(held.body.data.map((r: { id: string }) => r.id)).toContain(auditor);
    expect((await call(app, 'DELETE', `/api/v1/roles/${readsUsers}`, { token: manager.token })).status).toBe(200);
  });

  it('keeps roles and users of another workspace out of reach (404)', async () => {
    const other = await createWorkspace(app);
    const theirRoles = await call(app, 'GET', '/api/v1/roles', { token: other.apiKey });
    const theirViewer = theirRoles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const mine = await userWith();
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: mine.id, role_id: theirViewer } })).status,
    ).toBe(404);
    expect(
      (await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: other.owner.id, role_id: roleIds.viewer } }))
        .status,
    ).toBe(404);
    expect((await call(app, 'DELETE', `/api/v1/roles/${theirViewer}`, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/users/${other.owner.id}/roles`, { token: ws.apiKey })).status).toBe(404);
    const listed = await call(app, 'GET', '/api/v1/roles?per_page=100', { token: ws.apiKey });
    expect(listed.body.data.map((r: { id: string }) => r.id)).not.toContain(theirViewer);
  });

  it('gets a role by id or key, changes a custom one (its holders at once), never a built-in one', async () => {
    const byKey = await call(app, 'GET', '/api/v1/roles/viewer', { token: ws.apiKey });
    expect(byKey.status).toBe(200);
    expect(byKey.body.data).toMatchObject({ id: roleIds.viewer, key: 'viewer', builtin: true });
    expect((await call(app, 'GET', `/api/v1/roles/${roleIds.viewer}`, { token: ws.apiKey })).body.data.key).toBe('viewer');
    expect((await call(app, 'GET', '/api/v1/roles/rol_missing', { token: ws.apiKey })).body.error.code).toBe('NOT_FOUND');

    const role = (await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Auditors', permissions: ['audit:read'] } }))
      .body.data;
    const holder = await userWith();
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: holder.id, role_id: role.id } });
    expect((await call(app, 'GET', '/api/v1/users', { token: holder.token })).status).toBe(403);

    const changed = await call(app, 'PATCH', `/api/v1/roles/${role.id}`, {
      token: ws.apiKey,
      body: { name: 'Auditors and readers', description: 'Reads', permissions: ['audit:read', 'users:read'] },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({
      id: role.id,
      key: role.key,
      name: 'Auditors and readers',
      description: 'Reads',
      builtin: false,
      permissions: ['audit:read', 'users:read'],
    });
    expect((await call(app, 'GET', '/api/v1/users', { token: holder.token })).status).toBe(200);

    const builtin = await call(app, 'PATCH', `/api/v1/roles/${roleIds.viewer}`, {
      token: ws.apiKey,
      body: { permissions: ['vault:reveal'] },
    });
    expect([builtin.status, builtin.body.error.code]).toEqual([409, 'CONFLICT']);
    const bad = await call(app, 'PATCH', `/api/v1/roles/${role.id}`, { token: ws.apiKey, body: { permissions: ['users:delete'] } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const extra = await call(app, 'PATCH', `/api/v1/roles/${role.id}`, { token: ws.apiKey, body: { key: 'renamed' } });
    expect([extra.status, extra.body.error.code]).toEqual([400, 'BAD_REQUEST']);

    // Nobody hands out more than they hold: a role manager cannot widen a role beyond their own grants.
    const manager = (
      await call(app, 'POST', '/api/v1/roles', { token: ws.apiKey, body: { name: 'Role managers', permissions: ['roles:write'] } })
    ).body.data;
    const managerUser = await userWith();
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: managerUser.id, role_id: manager.id } });
    const widened = await call(app, 'PATCH', `/api/v1/roles/${role.id}`, {
      token: managerUser.token,
      body: { permissions: ['roles:write'] },
    });
    expect([widened.status, widened.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const viewer = await userWith('viewer');
    expect((await call(app, 'GET', `/api/v1/roles/${role.id}`, { token: viewer.token })).status).toBe(200);
    const refused = await call(app, 'PATCH', `/api/v1/roles/${role.id}`, { token: viewer.token, body: { name: 'Mine' } });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);

    // The same procedures on tRPC.
    expect((await trpc(app, 'query', 'roles.get', { id: role.id }, ws.apiKey)).body.result.data.name).toBe('Auditors and readers');
    const trpcBuiltin = await trpc(app, 'mutation', 'roles.update', { id: roleIds.admin, name: 'Boss' }, ws.apiKey);
    expect(trpcBuiltin.body.error.data.appCode).toBe('CONFLICT');
  });
});
