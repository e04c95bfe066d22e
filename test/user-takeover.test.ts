import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * A custom role with `users:write` (a support desk) manages members, not the people who hold more
 * than it does: changing an admin's email would let it reset the admin's password and sign in as
 * them; deactivating, locking or deleting an admin would take the workspace's administrators away.
 */
describe('users:write cannot take over or remove a user who holds more', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let supportToken: string;
  const password = 'a long enough passphrase';

  async function userWith(roleId: string | null, label: string) {
    const email = uniqueEmail(label);
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } });
    expect(created.status).toBe(201);
    if (roleId) {
      const assigned = await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: created.body.data.id, role_id: roleId },
      });
      expect(assigned.status).toBe(201);
    }
    return { id: created.body.data.id as string, email };
  }

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Support desk');
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { key: 'support', name: 'Support', permissions: ['users:read', 'users:write'] },
    });
    expect(role.status).toBe(201);
    const support = await userWith(role.body.data.id, 'support');
    supportToken = (await signIn(app, ws.id, support.email, password)).accessToken;
  });
  afterAll(() => app.close());

  it.each([
    ['changing the email of', (id: string) => ['PATCH', `/api/v1/users/${id}`, { email: uniqueEmail('attacker') }] as const],
    ['deactivating', (id: string) => ['PATCH', `/api/v1/users/${id}`, { status: 'deactivated' }] as const],
    ['locking', (id: string) => ['PATCH', `/api/v1/users/${id}`, { status: 'locked' }] as const],
    ['deleting', (id: string) => ['DELETE', `/api/v1/users/${id}`, undefined] as const],
  ])('refuses %s an admin (403) and leaves the admin as they were', async (_what, request) => {
    const admin = await userWith('admin', 'admin');
    const [method, path, body] = request(admin.id);
    const res = await call(app, method, path, { token: supportToken, body });
    expect([res.status, res.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    const after = await call(app, 'GET', `/api/v1/users/${admin.id}`, { token: ws.apiKey });
    expect([after.body.data.email, after.body.data.status]).toEqual([admin.email, 'active']);
    expect((await login(app, ws.id, admin.email, password)).status).toBe(200);
  });

  it('refuses changing the email of a viewer, whose reads it does not hold', async () => {
    const viewer = await userWith('viewer', 'viewer');
    const res = await call(app, 'PATCH', `/api/v1/users/${viewer.id}`, { token: supportToken, body: { email: uniqueEmail('moved') } });
    expect([res.status, res.body.error?.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('still manages members and its peers', async () => {
    const member = await userWith(null, 'member');
    const moved = await call(app, 'PATCH', `/api/v1/users/${member.id}`, { token: supportToken, body: { email: uniqueEmail('moved') } });
    expect(moved.status).toBe(200);
    const peer = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const supportRole = (peer.body.data as { id: string; key: string }[]).find((r) => r.key === 'support');
    const colleague = await userWith(supportRole?.id ?? null, 'colleague');
    const locked = await call(app, 'PATCH', `/api/v1/users/${colleague.id}`, { token: supportToken, body: { status: 'locked' } });
    expect([locked.status, locked.body.data?.status]).toEqual([200, 'locked']);
    const deleted = await call(app, 'DELETE', `/api/v1/users/${member.id}`, { token: supportToken });
    expect(deleted.status).toBe(200);
  });

  it('an admin still changes an admin', async () => {
    const admin = await userWith('admin', 'admin');
    const other = await userWith('admin', 'other-admin');
    const adminToken = (await signIn(app, ws.id, admin.email, password)).accessToken;
    const res = await call(app, 'PATCH', `/api/v1/users/${other.id}`, { token: adminToken, body: { status: 'deactivated' } });
    expect([res.status, res.body.data?.status]).toEqual([200, 'deactivated']);
  });
});
