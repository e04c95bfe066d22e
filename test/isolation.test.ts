import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedureMeta } from '../src/router.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * Tenant isolation, from the outside: every management path that names a resource, called by
 * workspace B's owner and B's API key with workspace A's ids, answers 404, and no list of B shows A's
 * rows. The paths come from the router itself, so a new endpoint joins the matrix by existing.
 */
describe('tenant isolation matrix', () => {
  let app: TestApp;
  let a: TestWorkspace;
  let b: TestWorkspace;
  let bOwnerToken: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    a = await createWorkspace(app, 'A');
    b = await createWorkspace(app, 'B');
    bOwnerToken = (await signIn(app, b.id, b.owner.email, b.owner.password)).accessToken;
    const user = await call(app, 'POST', '/api/v1/users', {
      token: a.apiKey,
      body: { email: uniqueEmail('a'), password: 'workspace a passphrase' },
    });
    ids.users = user.body.data.id;
    ids.roles = (
      await call(app, 'POST', '/api/v1/roles', { token: a.apiKey, body: { name: 'A role', permissions: ['users:read'] } })
    ).body.data.id;
    ids.groups = (await call(app, 'POST', '/api/v1/groups', { token: a.apiKey, body: { name: 'A group' } })).body.data.id;
    await call(app, 'POST', `/api/v1/groups/${ids.groups}/members`, { token: a.apiKey, body: { user_id: ids.users } });
    ids.invitations = (
      await call(app, 'POST', '/api/v1/invitations', { token: a.apiKey, body: { email: uniqueEmail('inv') } })
    ).body.data.id;
    ids['api-keys'] = (await call(app, 'POST', '/api/v1/api-keys', { token: a.apiKey, body: { name: 'A key' } })).body.data.id;
    ids.organizations = (
      await call(app, 'POST', '/api/v1/organizations', { token: a.apiKey, body: { name: 'A org', domains: ['a-only.example'] } })
    ).body.data.id;
    ids['idp-attributes'] = (
      await call(app, 'POST', '/api/v1/idp-attributes', { token: a.apiKey, body: { key: 'a_only', name: 'A only' } })
    ).body.data.key;
    ids.applications = (
      await call(app, 'POST', '/api/v1/applications', {
        token: a.apiKey,
        body: { name: 'A app', type: 'web', redirect_uris: ['https://a.example.com/callback'] },
      })
    ).body.data.id;
    ids['vault/objects'] = (
      await call(app, 'POST', '/api/v1/vault/objects/', { token: a.apiKey, body: { name: 'A secret', value: 'a value' } })
    ).body.data.id;
    const aMember = (await signIn(app, a.id, user.body.data.email, 'workspace a passphrase')).accessToken;
    ids['iga/requests'] = (
      await call(app, 'POST', '/api/v1/iga/requests', { token: aMember, body: { entitlement_id: ids.roles, justification: 'A' } })
    ).body.data.id;
    ids['iga/reviews'] = (
      await call(app, 'POST', '/api/v1/iga/reviews', { token: a.apiKey, body: { name: 'A review', scope: { type: 'everyone' } } })
    ).body.data.id;
    ids.items = (await call(app, 'GET', `/api/v1/iga/reviews/${ids['iga/reviews']}/items`, { token: a.apiKey })).body.data[0].id;
    ids.webhooks = (
      await call(app, 'POST', '/api/v1/webhooks/', { token: a.apiKey, body: { url: 'http://127.0.0.1:9/a-hooks' } })
    ).body.data.id;
    ids['webhooks/deliveries'] = (await call(app, 'POST', `/api/v1/webhooks/${ids.webhooks}/test`, { token: a.apiKey })).body.data.id;
    ids['audit/events'] = (await call(app, 'GET', '/api/v1/audit/events/?per_page=1', { token: a.apiKey })).body.data[0].id;
    ids.domains = (
      await call(app, 'POST', '/api/v1/domains', { token: a.apiKey, body: { domain: `a-${a.id.slice(4)}.example.com` } })
    ).body.data.id;
    // Template keys are the same in every workspace: A's customization must stay A's (checked below).
    await call(app, 'PUT', '/api/v1/email-templates/invitation', {
      token: a.apiKey,
      body: { subject: 'A only {{workspace_name}}', html: '<p>A only {{link}}</p>', text: 'A only {{link}}' },
    });
    await call(app, 'PATCH', '/api/v1/branding', { token: a.apiKey, body: { name: 'A only brand' } });
    ids.actions = (
      await call(app, 'POST', '/api/v1/actions/', {
        token: a.apiKey,
        body: { name: 'A action', code: 'exports.onExecutePostLogin = async () => {};' },
      })
    ).body.data.id;
  });
  afterAll(() => app.close());

  /** Management paths with an id, user-owned paths (/auth, /mfa) aside: those are covered per module. */
  const idPaths = [...procedureMeta.values()]
    .map((meta) => meta.openapi)
    .filter((o): o is NonNullable<typeof o> => !!o && o.path.includes('{') && !/\/api\/v1\/(auth|mfa)\//.test(o.path));

  it('covers every management path that names a resource', () => {
    expect(idPaths.length).toBeGreaterThanOrEqual(10);
  });

  it.each(idPaths.map((o) => [o.method, o.path] as const))(
    '%s %s with another workspace’s ids is 404 for its owner and API key',
    async (method, path) => {
      // The collection is the path before its first id: `users`, `audit/events`, `iga/requests`…
      const collection = /^\/api\/v1\/([a-z/-]+?)\/\{/.exec(path)?.[1] as string;
      const url = path
        .replace('{id}', ids[collection] ?? 'missing')
        .replace('{key}', ids[collection] ?? 'missing')
        .replace('{user_id}', ids.users as string)
        .replace('{item_id}', ids.items as string);
      // A body that would be valid in B, so only the foreign id can be the reason for the 404.
      const bodies: Record<string, object> = {
        'PATCH /api/v1/users/{id}': { name: 'Renamed' },
        'POST /api/v1/groups/{id}/members': { user_id: b.owner.id },
        'PATCH /api/v1/groups/{id}': { name: 'Renamed' },
        'PATCH /api/v1/roles/{id}': { name: 'Renamed' },
        'PATCH /api/v1/organizations/{id}': { name: 'Renamed' },
        'POST /api/v1/organizations/{id}/members': { user_id: b.owner.id },
        'PATCH /api/v1/idp-attributes/{key}': { enabled: false },
        'PATCH /api/v1/applications/{id}': { name: 'Renamed' },
        'PATCH /api/v1/webhooks/{id}': { enabled: false },
        'POST /api/v1/iga/requests/{id}/deny': { reason: 'not yours' },
        'POST /api/v1/iga/reviews/{id}/items/{item_id}/decide': { decision: 'keep' },
        'PUT /api/v1/email-templates/{key}': { subject: 'Renamed', html: '<p>{{link}}</p>', text: '{{link}}' },
        'PATCH /api/v1/actions/{id}': { name: 'Renamed' },
      };
      const body = method === 'GET' || method === 'DELETE' ? undefined : (bodies[`${method} ${path}`] ?? {});
      for (const token of [b.apiKey, bOwnerToken]) {
        const res = await call(app, method, url, { token, ...(body ? { body } : {}) });
        expect(res.status, `${method} ${url}`).toBe(404);
        expect(res.body.error.code).toBe('NOT_FOUND');
      }
    },
  );

  it('assign and revoke with another workspace’s user or role are 404', async () => {
    const bRoles = await call(app, 'GET', '/api/v1/roles', { token: b.apiKey });
    const bViewer = bRoles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    for (const body of [
      { user_id: ids.users, role_id: bViewer },
      { user_id: b.owner.id, role_id: ids.roles },
    ]) {
      for (const path of ['/api/v1/roles/assign', '/api/v1/roles/revoke']) {
        expect((await call(app, 'POST', path, { token: bOwnerToken, body })).status, path).toBe(404);
      }
    }
  });

  it('shows none of A’s rows in any of B’s lists', async () => {
    for (const path of [
      '/api/v1/users',
      '/api/v1/roles',
      '/api/v1/groups',
      '/api/v1/invitations',
      '/api/v1/api-keys',
      '/api/v1/applications',
      '/api/v1/audit/events/',
      '/api/v1/organizations',
      '/api/v1/idp-attributes',
      '/api/v1/webhooks/',
      '/api/v1/threat/scores/recent',
      '/api/v1/vault/objects/',
      '/api/v1/iga/entitlements',
      '/api/v1/iga/requests',
      '/api/v1/iga/reviews',
      '/api/v1/domains',
      '/api/v1/actions/',
    ]) {
      const res = await call(app, 'GET', `${path}?per_page=100`, { token: b.apiKey });
      expect(res.status, path).toBe(200);
      const rows = JSON.stringify(res.body.data);
      for (const id of Object.values(ids)) expect(rows, path).not.toContain(id);
      expect(rows).not.toContain(a.owner.id);
    }
  });

  it('shows B its own branding and templates, not A’s customizations', async () => {
    const branding = await call(app, 'GET', '/api/v1/branding', { token: b.apiKey });
    expect(branding.body.data).toMatchObject({ name: 'B', customized: false });
    const templates = await call(app, 'GET', '/api/v1/email-templates/', { token: bOwnerToken });
    expect(JSON.stringify(templates.body.data)).not.toContain('A only');
    expect(templates.body.data.every((t: { customized: boolean }) => !t.customized)).toBe(true);
  });

  it('lets the credential’s workspace win over any X-Tenant-ID', async () => {
    const res = await call(app, 'GET', `/api/v1/users/${ids.users}`, { token: b.apiKey, headers: { 'x-tenant-id': a.id } });
    expect(res.status).toBe(404);
    const own = await call(app, 'GET', '/api/v1/users', { token: b.apiKey, headers: { 'x-tenant-id': a.id } });
    expect(own.body.data.map((u: { id: string }) => u.id)).toEqual([b.owner.id]);
  });
});
