import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { authenticatorOf, codeAt } from '../../../test/helpers/authenticator.ts';

const PASSWORD = 'reporting passphrase';

const USERS_REPORT = `query($q: String, $perPage: Int) {
  users(q: $q, perPage: $perPage) {
    data { email roles { role { key } expiresAt } groups { name } mfa { verified kinds } }
    meta { total }
  }
}`;

describe('GraphQL admin reporting: users with roles, groups and factors; roles with member counts', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  /**
   * Statements that read the relation tables, as the database driver sees them; not the background
   * round that deletes lapsed role assignments each second (roles/lapses.ts), which runs whatever a
   * request does.
   */
  const relationReads: string[] = [];
  const tag = `rep${Date.now()}`;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Reporting');
    other = await createWorkspace(app, 'Elsewhere');
    app.deps.orm.em
      .getConnection()
      .getKnex()
      .on('query', (query: { sql: string }) => {
        if (/^\s*delete from role_assignments/.test(query.sql)) return;
        if (/role_assignments|group_members|mfa_factors/.test(query.sql)) relationReads.push(query.sql);
      });
  });
  afterAll(() => app.close());

  async function createUser(label: string) {
    const email = uniqueEmail(`${tag}-${label}`);
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(res.status).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  async function countedReads<T>(run: () => Promise<T>): Promise<{ result: T; reads: number }> {
    relationReads.length = 0;
    const result = await run();
    return { result, reads: relationReads.length };
  }

  it('shows each user with live roles, groups and verified factor counts, in a constant number of statements', async () => {
    const users = [];
    for (let i = 0; i < 12; i++) users.push(await createUser(`u${String(i).padStart(2, '0')}`));
    const [first, second, third] = users as [(typeof users)[0], (typeof users)[0], (typeof users)[0]];

    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: `Support ${tag}`, permissions: ['users:read'] },
    });
    const group = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: `Team ${tag}` } });
    for (const user of [first, second]) {
      expect(
        (await call(app, 'POST', `/api/v1/groups/${group.body.data.id}/members`, { token: ws.apiKey, body: { user_id: user.id } })).status,
      ).toBe(201);
    }
    const until = new Date(app.clock.now().getTime() + 60 * 60_000).toISOString();
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: first.id, role_id: role.body.data.id, expires_at: until },
    });
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: third.id, role_id: role.body.data.id, expires_at: new Date(app.clock.now().getTime() + 60_000).toISOString() },
    });

    const session = await signIn(app, ws.id, second.email, PASSWORD);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: codeAt(totp, app.clock) },
    });
    expect(verified.status).toBe(200);

    // Third's assignment expires: from then on it grants nothing, and the report says so.
    app.clock.advance(2 * 60_000);

    const small = await countedReads(() => graphql(app, USERS_REPORT, { q: `${tag}-u0`, perPage: 3 }, ws.apiKey));
    const large = await countedReads(() => graphql(app, USERS_REPORT, { q: tag, perPage: 12 }, ws.apiKey));
    expect(large.result.body.errors).toBeUndefined();
    expect(small.result.body.data.users.data).toHaveLength(3);
    expect(large.result.body.data.users.data).toHaveLength(12);
    expect(large.result.body.data.users.meta.total).toBe(12);
    expect(small.reads).toBeGreaterThan(0);
    expect(large.reads).toBe(small.reads);
    expect(large.reads).toBeLessThanOrEqual(3);

    const byEmail = new Map(large.result.body.data.users.data.map((u: { email: string }) => [u.email, u]));
    expect(byEmail.get(first.email)).toEqual({
      email: first.email,
      roles: expect.arrayContaining([
        { role: { key: 'member' }, expiresAt: null },
        { role: { key: role.body.data.key }, expiresAt: until },
      ]),
      groups: [{ name: `Team ${tag}` }],
      mfa: { verified: 0, kinds: [] },
    });
    expect(byEmail.get(second.email)).toMatchObject({ groups: [{ name: `Team ${tag}` }], mfa: { verified: 1, kinds: ['totp'] } });
    expect(byEmail.get(third.email)).toMatchObject({ roles: [{ role: { key: 'member' }, expiresAt: null }], groups: [] });

    const roles = await countedReads(() =>
      graphql(app, '{ roles(perPage: 50) { data { key memberCount } meta { total } } }', {}, ws.apiKey),
    );
    expect(roles.result.body.errors).toBeUndefined();
    const counts = Object.fromEntries(
      roles.result.body.data.roles.data.map((r: { key: string; memberCount: number }) => [r.key, r.memberCount]),
    );
    expect(counts).toMatchObject({ owner: 1, member: 12, [role.body.data.key]: 1 });
    expect(roles.reads).toBe(1);

    const groups = await graphql(app, '{ groups(q: $q) { data { name memberCount } } }'.replace('(q: $q)', `(q: "${tag}")`), {}, ws.apiKey);
    expect(groups.body.data.groups.data).toEqual([{ name: `Team ${tag}`, memberCount: 2 }]);
  });

  it('shows a user’s groups only to a caller who may read groups (groups:read), on GraphQL and tRPC alike', async () => {
    const helper = await createUser('helpdesk');
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: `Helpdesk ${tag}`, permissions: ['users:read'] },
    });
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: helper.id, role_id: role.body.data.id } });
    const group = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: `Hidden ${tag}` } });
    await call(app, 'POST', `/api/v1/groups/${group.body.data.id}/members`, { token: ws.apiKey, body: { user_id: helper.id } });
    const asHelper = await signIn(app, ws.id, helper.email, PASSWORD);
    const query = '{ users(q: "helpdesk", perPage: 5) { data { email groups { name } } } }';

    expect((await call(app, 'GET', '/api/v1/groups', { token: asHelper.accessToken })).status).toBe(403);
    const refused = await graphql(app, query, {}, asHelper.accessToken);
    expect(refused.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    expect(refused.body.errors?.[0]?.message).toContain('groups:read');
    expect(refused.body.data.users.data).toEqual([{ email: helper.email, groups: null }]);
    expect(JSON.stringify(refused.body)).not.toContain(`Hidden ${tag}`);

    const relations = await trpc(app, 'query', 'users.relations', { ids: [helper.id] }, asHelper.accessToken);
    expect(relations.status).toBe(200);
    expect(JSON.stringify(relations.body)).not.toContain(`Hidden ${tag}`);
    const memberships = await trpc(app, 'query', 'groups.ofUsers', { ids: [helper.id] }, asHelper.accessToken);
    expect([memberships.status, memberships.body.error?.data.appCode]).toEqual([403, 'FORBIDDEN']);

    const shown = await graphql(app, query, {}, ws.apiKey);
    expect(shown.body.errors).toBeUndefined();
    expect(shown.body.data.users.data).toEqual([{ email: helper.email, groups: [{ name: `Hidden ${tag}` }] }]);
    const listed = await trpc(app, 'query', 'groups.ofUsers', { ids: [helper.id] }, ws.apiKey);
    expect(listed.body.result.data).toEqual([{ user_id: helper.id, groups: [{ id: group.body.data.id, name: `Hidden ${tag}` }] }]);
  });

  it('lets viewers read the reports, refuses members, and never shows another workspace', async () => {
    const viewer = await createUser('viewer');
    const viewerRole = (await call(app, 'GET', '/api/v1/roles?per_page=50', { token: ws.apiKey })).body.data.find(
      (r: { key: string }) => r.key === 'viewer',
    );
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: viewer.id, role_id: viewerRole.id } });
    const asViewer = await signIn(app, ws.id, viewer.email, PASSWORD);
    const read = await graphql(
      app,
      '{ users(perPage: 2) { data { roles { role { key } } } } roles { data { memberCount } } }',
      {},
      asViewer.accessToken,
    );
    expect(read.body.errors).toBeUndefined();

    const member = await createUser('member');
    const asMember = await signIn(app, ws.id, member.email, PASSWORD);
    const refused = await graphql(app, '{ roles { data { key } } }', {}, asMember.accessToken);
    expect(refused.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');

    // The batch procedure answers empty relations for ids it cannot see, exactly as for no user at all.
    const cross = await trpc(app, 'query', 'users.relations', { ids: [other.owner.id] }, ws.apiKey);
    expect(cross.status).toBe(200);
    expect(cross.body.result.data).toEqual([{ user_id: other.owner.id, roles: [], mfa: { verified: 0, kinds: [] } }]);
    const crossGroups = await trpc(app, 'query', 'groups.ofUsers', { ids: [other.owner.id] }, ws.apiKey);
    expect(crossGroups.body.result.data).toEqual([{ user_id: other.owner.id, groups: [] }]);
    const otherRoles = (await call(app, 'GET', '/api/v1/roles?per_page=50', { token: other.apiKey })).body.data;
    const counts = await trpc(app, 'query', 'roles.memberCounts', { ids: otherRoles.map((r: { id: string }) => r.id) }, ws.apiKey);
    expect(counts.body.result.data.every((c: { members: number }) => c.members === 0)).toBe(true);
  });
});
