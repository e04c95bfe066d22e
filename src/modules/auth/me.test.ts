import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/** GET /api/v1/auth/me: what a frontend needs to decide which screens are read-only. */
describe('GET /api/v1/auth/me', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function userWithRole(roleKey: string | null): Promise<string> {
    const email = uniqueEmail(roleKey ?? 'member');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'who am i passphrase' } });
    if (roleKey) {
      const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
      const role = roles.body.data.find((r: { key: string }) => r.key === roleKey);
      await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: created.body.data.id, role_id: role.id } });
    }
    return (await signIn(app, ws.id, email, 'who am i passphrase')).accessToken;
  }

  it('tells an owner who they are and spells out every permission', async () => {
    const { accessToken, userId } = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const res = await call(app, 'GET', '/api/v1/auth/me', { token: accessToken });
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ id: userId, email: ws.owner.email });
    expect(res.body.data.workspace_id).toBe(ws.id);
    expect(res.body.data.roles).toContain('owner');
    expect(res.body.data.permissions).toEqual(expect.arrayContaining(['users:write', 'roles:write', 'vault:reveal']));
    expect(res.body.data.permissions).not.toContain('*');
  });

  it('gives a viewer only read permissions and a member none, on every door', async () => {
    const viewer = await call(app, 'GET', '/api/v1/auth/me', { token: await userWithRole('viewer') });
    expect(viewer.body.data.roles).toContain('viewer');
    expect(viewer.body.data.permissions).toContain('users:read');
    expect(viewer.body.data.permissions.filter((p: string) => !p.endsWith(':read'))).toEqual([]);

    const member = await trpc(app, 'query', 'auth.me', undefined, await userWithRole(null));
    expect(member.status).toBe(200);
    expect(member.body.result.data.roles).toEqual(['member']);
    expect(member.body.result.data.permissions).toEqual([]);
  });

  it('is for signed-in users: an API key is FORBIDDEN, nothing is UNAUTHORIZED', async () => {
    expect((await call(app, 'GET', '/api/v1/auth/me', { token: ws.apiKey })).body.error.code).toBe('FORBIDDEN');
    expect((await call(app, 'GET', '/api/v1/auth/me')).body.error.code).toBe('UNAUTHORIZED');
  });
});
