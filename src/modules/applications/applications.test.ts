import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('applications', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    other = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const create = (body: object, token = ws.apiKey) => call(app, 'POST', '/api/v1/applications', { token, body });

  it('registers each type: a secret for web and m2m only, shown once', async () => {
    const cases = [
      {
        type: 'web',
        redirect_uris: ['https://app.example.com/callback'],
        secret: true,
        grants: ['authorization_code', 'refresh_token', 'client_credentials'],
      },
      { type: 'spa', redirect_uris: ['http://localhost:5173/callback'], secret: false, grants: ['authorization_code', 'refresh_token'] },
      {
        type: 'native',
        redirect_uris: ['com.example.app:/oauth2redirect', 'http://127.0.0.1/callback'],
        secret: false,
        grants: ['authorization_code', 'refresh_token'],
      },
      { type: 'm2m', redirect_uris: [], secret: true, grants: ['client_credentials'] },
    ];
    for (const c of cases) {
      const res = await create({ name: `My ${c.type} app`, type: c.type, redirect_uris: c.redirect_uris });
      expect(res.status, c.type).toBe(201);
      const data = res.body.data;
      expect(data).toMatchObject({
        client_id: data.id,
        name: `My ${c.type} app`,
        type: c.type,
        redirect_uris: c.redirect_uris,
        grant_types: c.grants,
        token_endpoint_auth_method: c.secret ? 'client_secret_basic' : 'none',
      });
      expect(data.id).toMatch(/^app_/);
      if (c.secret) {
        expect(data.client_secret).toMatch(/^cs_[A-Za-z0-9_-]{40,}$/);
        expect(data.client_secret_prefix).toBe(data.client_secret.slice(0, 8));
      } else {
        expect(data).not.toHaveProperty('client_secret');
        expect(data.client_secret_prefix).toBeNull();
      }
      const got = await call(app, 'GET', `/api/v1/applications/${data.id}`, { token: ws.apiKey });
      expect(got.status).toBe(200);
      expect(got.body.data).not.toHaveProperty('client_secret');
      if (c.secret) expect(JSON.stringify(got.body)).not.toContain(data.client_secret);
    }
  });

  it('defaults the type: web with redirect URIs, m2m without; both with a secret (was 400 without type)', async () => {
    const backend = await create({ name: 'x' });
    expect(backend.status).toBe(201);
    expect(backend.body.data).toMatchObject({ type: 'm2m', redirect_uris: [], grant_types: ['client_credentials'] });
    expect(backend.body.data.client_secret).toMatch(/^cs_/);
    const site = await create({ name: 'x', redirect_uris: ['https://app.example.com/cb'] });
    expect(site.status).toBe(201);
    expect(site.body.data).toMatchObject({ type: 'web', redirect_uris: ['https://app.example.com/cb'] });
    expect(site.body.data.client_secret).toMatch(/^cs_/);
    // The default type's rules apply to the URIs as they would with the type spelled out.
    const refused = await create({ name: 'x', redirect_uris: ['http://app.example.com/cb'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((d: { path: string }) => d.path)).toContain('redirect_uris.0');
  });

  it('takes Auth0’s and Logto’s type names, stored and answered as the type they name', async () => {
    const cases = [
      ['regular_web', 'web', ['https://app.example.com/callback']],
      ['traditional', 'web', ['https://app.example.com/callback']],
      ['Traditional', 'web', ['https://app.example.com/callback']],
      ['non_interactive', 'm2m', []],
      ['machine_to_machine', 'm2m', []],
      ['MachineToMachine', 'm2m', []],
      ['SPA', 'spa', ['http://localhost:5173/callback']],
      ['Native', 'native', ['com.example.app:/callback']],
    ] as const;
    for (const [alias, type, redirect_uris] of cases) {
      const res = await create({ name: `A ${alias} app`, type: alias, redirect_uris });
      expect(res.status, alias).toBe(201);
      const confidential = type === 'web' || type === 'm2m';
      expect(res.body.data, alias).toMatchObject({ type, token_endpoint_auth_method: confidential ? 'client_secret_basic' : 'none' });
      if (confidential) expect(res.body.data.client_secret, alias).toMatch(/^cs_/);
      else expect(res.body.data, alias).not.toHaveProperty('client_secret');
      const got = await call(app, 'GET', `/api/v1/applications/${res.body.data.id}`, { token: ws.apiKey });
      expect(got.body.data.type, alias).toBe(type);
      const listed = await call(app, 'GET', `/api/v1/applications?type=${type}&per_page=100`, { token: ws.apiKey });
      expect(
        listed.body.data.map((a: { id: string }) => a.id),
        alias,
      ).toContain(res.body.data.id);
    }
    // The type's rules apply to an alias as to its canonical name: an m2m app has no redirect URI.
    expect((await create({ name: 'x', type: 'non_interactive', redirect_uris: ['https://app.example.com/cb'] })).status).toBe(400);
    expect((await create({ name: 'x', type: 'spa_app' })).status).toBe(400);
  });

  it('takes Auth0’s field names: app_type for type, callbacks for redirect_uris (on update too); never both', async () => {
    const callback = 'https://app.example.com/auth0-style/callback';
    const created = await create({ name: 'Auth0 style', app_type: 'regular_web', callbacks: [callback] });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ type: 'web', redirect_uris: [callback] });
    expect(created.body.data).not.toHaveProperty('callbacks');
    const moved = 'https://app.example.com/auth0-style/moved';
    const updated = await call(app, 'PATCH', `/api/v1/applications/${created.body.data.id}`, {
      token: ws.apiKey,
      body: { callbacks: [moved] },
    });
    expect([updated.status, updated.body.data.redirect_uris]).toEqual([200, [moved]]);
    const both = await create({ name: 'Both', type: 'web', app_type: 'regular_web', redirect_uris: [callback] });
    expect([both.status, both.body.error.details]).toEqual([400, [{ path: 'app_type', message: 'send type or app_type, not both' }]]);
    const twice = await create({ name: 'Twice', redirect_uris: [callback], callbacks: [callback] });
    expect(twice.status).toBe(400);
  });

  it('registers post-logout redirect URIs (Auth0: allowed_logout_urls) with the redirect URIs’ rules; none for m2m', async () => {
    const bye = 'https://app.example.com/signed-out';
    const site = await create({ name: 'Logout', type: 'web', redirect_uris: ['https://app.example.com/cb'] });
    expect(site.body.data.post_logout_redirect_uris).toEqual([]);
    const patch = (body: object) => call(app, 'PATCH', `/api/v1/applications/${site.body.data.id}`, { token: ws.apiKey, body });
    const updated = await patch({ allowed_logout_urls: [bye] });
    expect([updated.status, updated.body.data.post_logout_redirect_uris]).toEqual([200, [bye]]);
    const read = await call(app, 'GET', `/api/v1/applications/${site.body.data.id}`, { token: ws.apiKey });
    expect(read.body.data).toMatchObject({ post_logout_redirect_uris: [bye], redirect_uris: ['https://app.example.com/cb'] });
    const insecure = await patch({ post_logout_redirect_uris: [bye, 'http://app.example.com/bye', bye] });
    expect([insecure.status, insecure.body.error.details.map((d: { path: string }) => d.path)]).toEqual([
      400,
      ['post_logout_redirect_uris.1', 'post_logout_redirect_uris.2'],
    ]);
    const spa = await create({
      name: 'SPA',
      type: 'spa',
      redirect_uris: ['http://localhost:5173/cb'],
      allowed_logout_urls: ['http://localhost:5173/'],
    });
    expect([spa.status, spa.body.data.post_logout_redirect_uris]).toEqual([201, ['http://localhost:5173/']]);
    const backend = await create({ name: 'Backend', type: 'm2m', post_logout_redirect_uris: [bye] });
    expect([backend.status, backend.body.error.details]).toEqual([400, [expect.objectContaining({ path: 'post_logout_redirect_uris' })]]);
  });

  it('lists with pagination and a type filter, never showing a secret', async () => {
    const created = await create({ name: 'Listed backend', type: 'm2m' });
    const list = await call(app, 'GET', '/api/v1/applications?per_page=100', { token: ws.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.meta).toMatchObject({ page: 1, per_page: 100 });
    expect(list.body.meta.total).toBeGreaterThanOrEqual(1);
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(created.body.data.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.data.client_secret);
    const m2m = await call(app, 'GET', '/api/v1/applications?type=m2m&per_page=100', { token: ws.apiKey });
    expect(m2m.body.data.every((a: { type: string }) => a.type === 'm2m')).toBe(true);
    // The names creation takes (Auth0's non_interactive, Logto's MachineToMachine) filter the same.
    for (const alias of ['non_interactive', 'MachineToMachine']) {
      const aliased = await call(app, 'GET', `/api/v1/applications?type=${alias}&per_page=100`, { token: ws.apiKey });
      expect([aliased.status, aliased.body.data]).toEqual([200, m2m.body.data]);
    }
    const paged = await call(app, 'GET', '/api/v1/applications?per_page=1&page=2', { token: ws.apiKey });
    expect(paged.body.data).toHaveLength(1);
    expect((await call(app, 'GET', '/api/v1/applications?type=desktop', { token: ws.apiKey })).status).toBe(400);
  });

  it('rotates a secret: a new one shown once, audited; public clients have none to rotate', async () => {
    const web = await create({ name: 'Rotating', type: 'web', redirect_uris: ['https://rotate.example.com/cb'] });
    const rotated = await call(app, 'POST', `/api/v1/applications/${web.body.data.id}/rotate-secret`, { token: ws.apiKey });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.client_secret).toMatch(/^cs_/);
    expect(rotated.body.data.client_secret).not.toBe(web.body.data.client_secret);
    expect(rotated.body.data.secret_rotated_at).not.toBeNull();
    const spa = await create({ name: 'Public', type: 'spa', redirect_uris: ['https://spa.example.com/cb'] });
    const refused = await call(app, 'POST', `/api/v1/applications/${spa.body.data.id}/rotate-secret`, { token: ws.apiKey });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('BAD_REQUEST');

    const rows = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ event_type: string }[]>(
        `select event_type, target_id, details from audit_events where workspace_id = ? and target_id = ? order by created_at`,
        [ws.id, web.body.data.id],
      );
    expect(rows.map((r) => r.event_type)).toEqual(['application.create', 'application.rotate_secret']);
    expect(JSON.stringify(rows)).not.toContain(rotated.body.data.client_secret);
    const stored = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ secret_hash: string }[]>(`select secret_hash from applications where id = ?`, [web.body.data.id]);
    expect(stored[0]?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('updates the name and redirect URIs, with the same rules', async () => {
    const web = await create({ name: 'Before', type: 'web', redirect_uris: ['https://before.example.com/cb'] });
    const id = web.body.data.id;
    const res = await call(app, 'PATCH', `/api/v1/applications/${id}`, {
      token: ws.apiKey,
      body: { name: 'After', redirect_uris: ['https://after.example.com/cb'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'After', redirect_uris: ['https://after.example.com/cb'] });
    const bad = await call(app, 'PATCH', `/api/v1/applications/${id}`, {
      token: ws.apiKey,
      body: { redirect_uris: ['http://after.example.com/cb'] },
    });
    expect(bad.status).toBe(400);
  });

  it('deletes: 200 with deleted true, then 404', async () => {
    const web = await create({ name: 'Doomed', type: 'spa', redirect_uris: ['https://doomed.example.com/cb'] });
    const id = web.body.data.id;
    const res = await call(app, 'DELETE', `/api/v1/applications/${id}`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id, deleted: true });
    expect((await call(app, 'GET', `/api/v1/applications/${id}`, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'DELETE', `/api/v1/applications/${id}`, { token: ws.apiKey })).status).toBe(404);
  });

  it.each([
    [{ name: 'x', type: 'desktop', redirect_uris: ['https://a.example.com/cb'] }, 'type'],
    [{ name: '', type: 'web', redirect_uris: ['https://a.example.com/cb'] }, 'name'],
    [{ name: 'x', type: 'web', redirect_uris: [] }, 'redirect_uris'],
    [{ name: 'x', type: 'web', redirect_uris: ['http://app.example.com/cb'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'spa', redirect_uris: ['https://a.example.com/cb', 'ftp://a.example.com/cb'] }, 'redirect_uris.1'],
    [{ name: 'x', type: 'web', redirect_uris: ['https://a.example.com/cb#frag'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'web', redirect_uris: ['https://*.example.com/cb'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'web', redirect_uris: ['https://user:pw@a.example.com/cb'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'web', redirect_uris: ['/relative/cb'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'web', redirect_uris: ['https://a.example.com/cb', 'https://a.example.com/cb'] }, 'redirect_uris.1'],
    [{ name: 'x', type: 'web', redirect_uris: ['myapp://callback'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'native', redirect_uris: ['javascript://alert(1)'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'native', redirect_uris: ['http://app.example.com/cb'] }, 'redirect_uris.0'],
    [{ name: 'x', type: 'm2m', redirect_uris: ['https://a.example.com/cb'] }, 'redirect_uris'],
    [{ name: 'x', type: 'web', redirect_uris: ['https://a.example.com/cb'], secret: 'mine' }, 'secret'],
  ])('refuses %j (400, %s)', async (body, path) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it('viewers read, members are refused, admins write', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const roleId = (key: string) => roles.body.data.find((r: { key: string }) => r.key === key).id as string;
    const tokens: Record<string, string> = {};
    for (const role of ['viewer', 'member', 'admin']) {
      const email = uniqueEmail(role);
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'applications passphrase' } });
      if (role !== 'member') {
        await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: roleId(role) } });
      }
      tokens[role] = (await signIn(app, ws.id, email, 'applications passphrase')).accessToken;
    }
    const body = { name: 'By role', type: 'm2m' };
    expect((await call(app, 'GET', '/api/v1/applications', { token: tokens.viewer })).status).toBe(200);
    expect((await create(body, tokens.viewer as string)).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/applications', { token: tokens.member })).status).toBe(403);
    expect((await create(body, tokens.member as string)).status).toBe(403);
    const made = await create(body, tokens.admin as string);
    expect(made.status).toBe(201);
    expect((await call(app, 'POST', `/api/v1/applications/${made.body.data.id}/rotate-secret`, { token: tokens.viewer })).status).toBe(403);
    expect((await call(app, 'DELETE', `/api/v1/applications/${made.body.data.id}`, { token: tokens.admin })).status).toBe(200);
  });

  it('keeps workspaces apart: another workspace’s application is 404 on every path and absent from lists', async () => {
    const theirs = await create({ name: 'Theirs', type: 'web', redirect_uris: ['https://theirs.example.com/cb'] }, other.apiKey);
    const id = theirs.body.data.id;
    for (const [method, path] of [
      ['GET', `/api/v1/applications/${id}`],
      ['PATCH', `/api/v1/applications/${id}`],
      ['POST', `/api/v1/applications/${id}/rotate-secret`],
      ['DELETE', `/api/v1/applications/${id}`],
    ] as const) {
      const res = await call(app, method, path, { token: ws.apiKey, ...(method === 'PATCH' ? { body: { name: 'Mine now' } } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const list = await call(app, 'GET', '/api/v1/applications?per_page=100', { token: ws.apiKey });
    expect(JSON.stringify(list.body)).not.toContain(id);
    expect((await call(app, 'GET', `/api/v1/applications/${id}`, { token: other.apiKey })).status).toBe(200);
  });
});
