import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('groups', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function newUser() {
    const res = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('grp'), password: 'group passphrase' },
    });
    return res.body.data as { id: string; email: string };
  }

  it('creates (201), lists with member counts, refuses a duplicate name in any case (409), deletes', async () => {
    const created = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Engineering', description: 'Builders' } });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Engineering', description: 'Builders', member_count: 0 });
    expect(created.body.data.id).toMatch(/^grp_/);
    const dup = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'engineering' } });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(dup.body.error.details).toEqual([{ path: 'name', message: 'is already taken' }]);

    const [a, b] = [await newUser(), await newUser()];
    for (const user of [a, b]) {
      const added = await call(app, 'POST', `/api/v1/groups/${created.body.data.id}/members`, {
        token: ws.apiKey,
        body: { user_id: user.id },
      });
      expect(added.status).toBe(201);
    }
    const again = await call(app, 'POST', `/api/v1/groups/${created.body.data.id}/members`, { token: ws.apiKey, body: { user_id: a.id } });
    expect(again.status).toBe(409);
    expect(again.body.error.details).toEqual([{ path: 'user_id', message: 'is already a member' }]);
    const listed = await call(app, 'GET', '/api/v1/groups?q=engin', { token: ws.apiKey });
    expect(listed.body).toMatchObject({ meta: { total: 1, page: 1, per_page: 20 } });
    expect(listed.body.data[0].member_count).toBe(2);

    const removed = await call(app, 'DELETE', `/api/v1/groups/${created.body.data.id}/members/${a.id}`, { token: ws.apiKey });
    expect(removed.body.data).toEqual({ id: a.id, deleted: true });
    expect((await call(app, 'DELETE', `/api/v1/groups/${created.body.data.id}/members/${a.id}`, { token: ws.apiKey })).status).toBe(404);

    const deleted = await call(app, 'DELETE', `/api/v1/groups/${created.body.data.id}`, { token: ws.apiKey });
    expect(deleted.body.data).toEqual({ id: created.body.data.id, deleted: true });
    expect((await call(app, 'DELETE', `/api/v1/groups/${created.body.data.id}`, { token: ws.apiKey })).status).toBe(404);
  });

  it('finds a group by name however its accents were typed (q in NFC, as names are kept), on REST and GraphQL', async () => {
    const created = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Équipe Façade' } });
    expect(created.status).toBe(201);
    for (const q of ['E\u0301quipe', 'équipe fac\u0327ade', 'ÉQUIPE']) {
      const listed = await call(app, 'GET', `/api/v1/groups?q=${encodeURIComponent(q)}`, { token: ws.apiKey });
      expect([q, listed.status, listed.body.data.map((g: { id: string }) => g.id)]).toEqual([q, 200, [created.body.data.id]]);
    }
    const viaGraphql = await graphql(app, 'query ($q: String) { groups(q: $q) { data { id } } }', { q: 'E\u0301quipe' }, ws.apiKey);
    expect(viaGraphql.body.data.groups.data).toEqual([{ id: created.body.data.id }]);
    await call(app, 'DELETE', `/api/v1/groups/${created.body.data.id}`, { token: ws.apiKey });
  });

  it('lets members do nothing here and keeps other workspaces’ groups and users out (404)', async () => {
    const email = uniqueEmail('member');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'group passphrase' } });
    const member = await signIn(app, ws.id, email, 'group passphrase');
    expect((await call(app, 'GET', '/api/v1/groups', { token: member.accessToken })).status).toBe(403);
    expect((await call(app, 'POST', '/api/v1/groups', { token: member.accessToken, body: { name: 'Mine' } })).status).toBe(403);

    const other = await createWorkspace(app);
    const theirs = await call(app, 'POST', '/api/v1/groups', { token: other.apiKey, body: { name: 'Theirs' } });
    expect((await call(app, 'DELETE', `/api/v1/groups/${theirs.body.data.id}`, { token: ws.apiKey })).status).toBe(404);
    const mine = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Mine' } });
    const foreignUser = await call(app, 'POST', `/api/v1/groups/${mine.body.data.id}/members`, {
      token: ws.apiKey,
      body: { user_id: other.owner.id },
    });
    expect(foreignUser.status).toBe(404);
    const listed = await call(app, 'GET', '/api/v1/groups?per_page=100', { token: ws.apiKey });
    expect(listed.body.data.map((g: { id: string }) => g.id)).not.toContain(theirs.body.data.id);
  });

  it('gets one group, renames it (409 on a taken name), lists its members; viewers read, only writers change', async () => {
    const group = (await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Support', description: 'Helpers' } })).body
      .data;
    await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Sales' } });
    const [a, b] = [await newUser(), await newUser()];
    for (const user of [a, b])
      await call(app, 'POST', `/api/v1/groups/${group.id}/members`, { token: ws.apiKey, body: { user_id: user.id } });

    const got = await call(app, 'GET', `/api/v1/groups/${group.id}`, { token: ws.apiKey });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ ...group, member_count: 2 });
    expect((await call(app, 'GET', '/api/v1/groups/grp_missing', { token: ws.apiKey })).body.error.code).toBe('NOT_FOUND');

    const renamed = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: ws.apiKey, body: { name: 'Customer support' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: group.id, name: 'Customer support', description: 'Helpers', member_count: 2 });
    const cleared = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: ws.apiKey, body: { description: null } });
    expect(cleared.body.data.description).toBeNull();
    const taken = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: ws.apiKey, body: { name: 'SALES' } });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'CONFLICT']);
    expect(taken.body.error.details).toEqual([{ path: 'name', message: 'is already taken' }]);
    const sameName = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: ws.apiKey, body: { name: 'customer support' } });
    expect(sameName.status).toBe(200);
    const unknownField = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: ws.apiKey, body: { owner: 'x' } });
    expect([unknownField.status, unknownField.body.error.code]).toEqual([400, 'BAD_REQUEST']);

    const members = await call(app, 'GET', `/api/v1/groups/${group.id}/members?per_page=1`, { token: ws.apiKey });
    expect(members.status).toBe(200);
    expect(members.body.meta).toEqual({ total: 2, page: 1, per_page: 1 });
    expect(members.body.data).toEqual([{ group_id: group.id, user_id: a.id, email: a.email, name: null, added_at: expect.any(String) }]);
    const second = await call(app, 'GET', `/api/v1/groups/${group.id}/members?per_page=1&page=2`, { token: ws.apiKey });
    expect(second.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([b.id]);
    expect((await call(app, 'GET', '/api/v1/groups/grp_missing/members', { token: ws.apiKey })).status).toBe(404);

    const viewer = await newUser();
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: viewer.id, role_id: 'viewer' } });
    const viewerToken = (await signIn(app, ws.id, viewer.email, 'group passphrase')).accessToken;
    expect((await call(app, 'GET', `/api/v1/groups/${group.id}`, { token: viewerToken })).status).toBe(200);
    expect((await call(app, 'GET', `/api/v1/groups/${group.id}/members`, { token: viewerToken })).status).toBe(200);
    const refused = await call(app, 'PATCH', `/api/v1/groups/${group.id}`, { token: viewerToken, body: { name: 'Mine' } });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);

    // The same procedures on tRPC.
    expect((await trpc(app, 'query', 'groups.get', { id: group.id }, ws.apiKey)).body.result.data.member_count).toBe(2);
    const trpcRefused = await trpc(app, 'mutation', 'groups.update', { id: group.id, name: 'Mine' }, viewerToken);
    expect(trpcRefused.body.error.data.appCode).toBe('FORBIDDEN');
    const trpcMembers = await trpc(app, 'query', 'groups.members', { id: group.id }, ws.apiKey);
    expect(trpcMembers.body.result.data.meta.total).toBe(2);
  });
});
