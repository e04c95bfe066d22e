import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { createLogger } from '../../core/logger.ts';
import { ActionSandbox } from './sandbox.ts';

const ALLOW = `exports.onExecutePostLogin = async (event, api) => {
  console.log('hello', event.user.email);
};
`;

describe('actions API', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    other = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const create = (body: object, token = ws.apiKey) => call(app, 'POST', '/api/v1/actions/', { token, body });
  const auditRows = (targetId: string) =>
    app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ event_type: string; outcome: string; details: Record<string, unknown> }[]>(
        'select event_type, outcome, details from audit_events where workspace_id = ? and target_id = ? order by created_at, id',
        [ws.id, targetId],
      );

  it('creates a draft, lists it at the exact path, reads, renames and deletes it, each audited', async () => {
    const created = await create({ name: 'Log sign-ins', code: ALLOW });
    expect(created.status).toBe(201);
    const action = created.body.data;
    expect(action).toMatchObject({ name: 'Log sign-ins', trigger: 'post-login', code: ALLOW, status: 'draft', deployed_version: null });
    expect(action.id).toMatch(/^act_/);

    const list = await call(app, 'GET', '/api/v1/actions/', { token: ws.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.meta).toMatchObject({ page: 1, per_page: 20 });
    expect(list.body.data.map((a: { id: string }) => a.id)).toContain(action.id);
    expect((await call(app, 'GET', `/api/v1/actions/${action.id}`, { token: ws.apiKey })).body.data).toEqual(action);

    const renamed = await call(app, 'PATCH', `/api/v1/actions/${action.id}`, { token: ws.apiKey, body: { name: 'Sign-in log' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Sign-in log', status: 'draft' });

    const deleted = await call(app, 'DELETE', `/api/v1/actions/${action.id}`, { token: ws.apiKey });
    expect(deleted.body.data).toEqual({ id: action.id, deleted: true });
    expect((await call(app, 'GET', `/api/v1/actions/${action.id}`, { token: ws.apiKey })).status).toBe(404);
    expect((await auditRows(action.id)).map((r) => r.event_type)).toEqual(['action.create', 'action.update', 'action.delete']);
  });

  it('deletes once when two deletes arrive together: one 200, the other 404, one audit row', async () => {
    const id = (await create({ name: 'Deleted twice', code: ALLOW })).body.data.id as string;
    const answers = await Promise.all([1, 2, 3].map(() => call(app, 'DELETE', `/api/v1/actions/${id}`, { token: ws.apiKey })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404, 404]);
    expect((await auditRows(id)).filter((r) => r.event_type === 'action.delete' && r.details.status === undefined)).toHaveLength(1);
  });

  it('validates: code or template (not both, not neither), names unique per workspace, strict bodies', async () => {
    expect((await create({ name: 'Nothing' })).status).toBe(400);
    expect((await create({ name: 'Both', code: ALLOW, template: 'require-mfa-for-admins' })).status).toBe(400);
    expect((await create({ code: ALLOW })).status).toBe(400);
    expect((await create({ name: 'X', code: ALLOW, trigger: 'pre-register' })).status).toBe(400);
    expect((await create({ name: 'X', code: ALLOW, extra: true })).status).toBe(400);
    expect((await create({ name: 'Unique name', code: ALLOW })).status).toBe(201);
    const duplicate = await create({ name: 'unique NAME', code: ALLOW });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe('CONFLICT');
    expect((await create({ name: 'Unique name', code: ALLOW }, other.apiKey)).status).toBe(201);
    expect((await call(app, 'GET', '/api/v1/actions/act_00000000000000000000000000', { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'GET', '/api/v1/actions/not-an-id', { token: ws.apiKey })).status).toBe(404);
  });

  it('deploys: compiled, versioned; new code is a draft while the deployed version keeps running', async () => {
    const { id } = (await create({ name: 'Versioned', code: ALLOW })).body.data;
    const first = await call(app, 'POST', `/api/v1/actions/${id}/deploy`, { token: ws.apiKey });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ status: 'deployed', deployed_version: 1 });
    expect(first.body.data.deployed_at).not.toBeNull();

    const edited = await call(app, 'PATCH', `/api/v1/actions/${id}`, {
      token: ws.apiKey,
      body: { code: ALLOW.replace('hello', 'hi') },
    });
    expect(edited.body.data).toMatchObject({ status: 'draft', deployed_version: 1 });
    const [live] = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ deployed_code: string }[]>('select deployed_code from actions where id = ?', [id]);
    expect(live?.deployed_code).toBe(ALLOW);

    const second = await call(app, 'POST', `/api/v1/actions/${id}/deploy`, { token: ws.apiKey });
    expect(second.body.data).toMatchObject({ status: 'deployed', deployed_version: 2 });
    const audit = await auditRows(id);
    expect(audit.filter((r) => r.event_type === 'action.deploy').map((r) => r.details.version)).toEqual([1, 2]);
  });

  it('refuses to deploy a syntax error: 400 with the line in details, and nothing changes', async () => {
    const code = `exports.onExecutePostLogin = async (event, api) => {\n  if (event.user.roles.includes('admin') {\n    api.requireSecondFactor();\n  }\n};\n`;
    const { id } = (await create({ name: 'Broken', code })).body.data;
    const res = await call(app, 'POST', `/api/v1/actions/${id}/deploy`, { token: ws.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.message).toContain('line 2');
    expect(res.body.error.details).toEqual([{ path: 'code', message: expect.stringMatching(/^line 2, column \d+: /) }]);
    expect((await call(app, 'GET', `/api/v1/actions/${id}`, { token: ws.apiKey })).body.data).toMatchObject({
      status: 'draft',
      deployed_version: null,
    });

    const noHandler = (await create({ name: 'No handler', code: 'const x = 1;' })).body.data;
    const refused = await call(app, 'POST', `/api/v1/actions/${noHandler.id}/deploy`, { token: ws.apiKey });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].message).toContain('exports.onExecutePostLogin');
  });

  it('tests an action against a sample event: decision, claims, step-up flag, logs and duration', async () => {
    const code = `exports.onExecutePostLogin = async (event, api) => {
  console.log('roles', event.user.roles.join(','), 'from', event.request.ip);
  if (event.user.metadata.blocked) api.access.deny('This account is blocked');
  api.accessToken.setCustomClaim('department', event.user.metadata.department ?? 'none');
  if (event.user.roles.includes('admin')) api.requireSecondFactor();
};`;
    const { id } = (await create({ name: 'Tested', code })).body.data;
    const allowed = await call(app, 'POST', `/api/v1/actions/${id}/test`, {
      token: ws.apiKey,
      body: { event: { user: { roles: ['admin'], metadata: { department: 'sales' } }, request: { ip: '192.0.2.1' } } },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toMatchObject({
      decision: 'allow',
      reason: null,
      claims: { department: 'sales' },
      require_second_factor: true,
      logs: [{ level: 'log', message: 'roles admin from 192.0.2.1' }],
      error: null,
    });
    expect(allowed.body.data.duration_ms).toBeGreaterThan(0);

    const denied = await call(app, 'POST', `/api/v1/actions/${id}/test`, {
      token: ws.apiKey,
      body: { event: { user: { metadata: { blocked: true } } } },
    });
    expect(denied.body.data).toMatchObject({ decision: 'deny', reason: 'This account is blocked', require_second_factor: false });

    const defaults = await call(app, 'POST', `/api/v1/actions/${id}/test`, { token: ws.apiKey, body: {} });
    expect(defaults.body.data).toMatchObject({ decision: 'allow', claims: { department: 'none' }, require_second_factor: false });

    const bad = await call(app, 'POST', `/api/v1/actions/${id}/test`, { token: ws.apiKey, body: { event: { user: { unknown: 1 } } } });
    expect(bad.status).toBe(400);
    // Three runs, and the refused one, which names the action too.
    const tests = (await auditRows(id)).filter((r) => r.event_type === 'action.test');
    expect(tests.map((r) => r.outcome)).toEqual(['success', 'success', 'success', 'failure']);
  });

  it('runs Auth0-style code and takes Auth0-shaped sample events (flat, app_metadata, authorization.roles)', async () => {
    const code = `exports.onExecutePostLogin = async (event, api) => {
  console.log(event.user.user_id, event.user.email_verified, JSON.stringify(event.user.user_metadata));
  if (event.user.app_metadata.blocked) api.access.deny('Blocked by app_metadata');
  api.idToken.setCustomClaim('https://example.com/plan', event.user.app_metadata.plan ?? 'free');
  if (event.authorization.roles.includes('admin')) api.multifactor.enable('any', { allowRememberBrowser: false });
};`;
    const { id } = (await create({ name: 'Auth0 style', code })).body.data;
    const test = (body: object) => call(app, 'POST', `/api/v1/actions/${id}/test`, { token: ws.apiKey, body });

    const flat = await test({ user: { user_id: 'usr_auth0', roles: ['admin'], app_metadata: { plan: 'gold' } } });
    expect(flat.status).toBe(200);
    expect(flat.body.data).toMatchObject({
      decision: 'allow',
      claims: { 'https://example.com/plan': 'gold' },
      require_second_factor: true,
      logs: [{ level: 'log', message: 'usr_auth0 true {}' }],
      error: null,
    });
    const nested = await test({ event: { authorization: { roles: ['admin'] }, user: { email_verified: false } } });
    expect(nested.body.data).toMatchObject({ decision: 'allow', require_second_factor: true, logs: [{ message: /false \{\}$/ }] });
    expect((await test({ user: { metadata: { blocked: true } } })).body.data).toMatchObject({
      decision: 'deny',
      reason: 'Blocked by app_metadata',
    });
    expect((await test({})).body.data).toMatchObject({
      decision: 'allow',
      claims: { 'https://example.com/plan': 'free' },
      require_second_factor: false,
    });

    // Two names for one thing, or the event in both places, is ambiguous: 400 naming the alias.
    for (const [body, path] of [
      [{ event: { user: {} }, user: {} }, 'event'],
      [{ user: { metadata: {}, app_metadata: {} } }, 'user.app_metadata'],
      [{ event: { user: { id: 'usr_a', user_id: 'usr_b' } } }, 'event.user.user_id'],
      [{ user: { roles: ['admin'] }, authorization: { roles: ['admin'] } }, 'authorization.roles'],
    ] as const) {
      const res = await test(body);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', details: [{ path }] });
    }
    expect((await test({ user: { unknown: 1 } })).status).toBe(400);
    expect((await test({ authorization: { permissions: [] } })).status).toBe(400);

    // idToken claims follow the access token's rules; the challengeWith calls require the factor too.
    const reserved = (
      await create({
        name: 'Reserved',
        code: `exports.onExecutePostLogin = async (e, api) => { api.idToken.setCustomClaim('sub', 'x'); };`,
      })
    ).body.data;
    const refused = await call(app, 'POST', `/api/v1/actions/${reserved.id}/test`, { token: ws.apiKey, body: {} });
    expect(refused.body.data).toMatchObject({ decision: 'deny', error: { kind: 'threw' } });
    const challenge = (
      await create({
        name: 'Challenge',
        code: `exports.onExecutePostLogin = async (e, api) => { api.authentication.challengeWith({ type: 'otp' }); };`,
      })
    ).body.data;
    const challenged = await call(app, 'POST', `/api/v1/actions/${challenge.id}/test`, { token: ws.apiKey, body: {} });
    expect(challenged.body.data).toMatchObject({ decision: 'allow', require_second_factor: true });
  });

  it('a failing action tests as deny, with the error (fail closed)', async () => {
    const { id } = (await create({ name: 'Thrower', code: 'exports.onExecutePostLogin = async () => {\n  null.boom;\n};' })).body.data;
    const res = await call(app, 'POST', `/api/v1/actions/${id}/test`, { token: ws.apiKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ decision: 'deny', claims: {}, error: { kind: 'threw', line: 2 } });
    expect(res.body.data.reason).toMatch(/^The action failed: TypeError/);

    const hog = (await create({ name: 'Hog', code: 'exports.onExecutePostLogin = async () => { new Array(2 ** 27).fill(0); };' })).body
      .data;
    const hogged = await call(app, 'POST', `/api/v1/actions/${hog.id}/test`, { token: ws.apiKey, body: {} });
    expect(hogged.status).toBe(200);
    expect(hogged.body.data.decision).toBe('deny');
    expect(['memory', 'crashed', 'threw']).toContain(hogged.body.data.error.kind);
    // The server is unharmed, and the sandbox works again.
    expect((await call(app, 'POST', `/api/v1/actions/${id}/test`, { token: ws.apiKey, body: {} })).body.data.error.kind).toBe('threw');
  });

  it('offers the built-in step-up template, and creates an action from it', async () => {
    const templates = await call(app, 'GET', '/api/v1/actions/templates', { token: ws.apiKey });
    expect(templates.status).toBe(200);
    const template = templates.body.data.find((t: { key: string }) => t.key === 'require-mfa-for-admins');
    expect(template).toMatchObject({ name: 'Require a second factor for admins and owners', trigger: 'post-login' });
    const created = await create({ template: 'require-mfa-for-admins' }, other.apiKey);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: template.name, code: template.code, status: 'draft' });
    const tested = await call(app, 'POST', `/api/v1/actions/${created.body.data.id}/test`, {
      token: other.apiKey,
      body: { event: { user: { roles: ['owner'] } } },
    });
    expect(tested.body.data).toMatchObject({ decision: 'allow', require_second_factor: true });
    expect((await create({ template: 'no-such-template' })).status).toBe(400);
  });

  it('lists templates a page at a time with meta; bad paging is 400', async () => {
    const all = await call(app, 'GET', '/api/v1/actions/templates?per_page=100', { token: ws.apiKey });
    expect(all.status).toBe(200);
    const total = all.body.data.length as number;
    expect(total).toBeGreaterThanOrEqual(1);
    expect(all.body.meta).toEqual({ total, page: 1, per_page: 100 });
    const first = await call(app, 'GET', '/api/v1/actions/templates?page=1&per_page=1', { token: ws.apiKey });
    expect(first.body).toEqual({ data: [all.body.data[0]], meta: { total, page: 1, per_page: 1 } });
    // The second item, or none while there is a single built-in template.
    const second = await call(app, 'GET', '/api/v1/actions/templates?page=2&per_page=1', { token: ws.apiKey });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ data: all.body.data.slice(1, 2), meta: { total, page: 2, per_page: 1 } });
    for (const query of ['page=0', 'per_page=101', 'per_page=abc', 'page=abc']) {
      const bad = await call(app, 'GET', `/api/v1/actions/templates?${query}`, { token: ws.apiKey });
      expect([bad.status, bad.body.error.code], query).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('viewers read, members do not; another workspace’s actions are 404', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const tokens: Record<string, string> = {};
    for (const role of ['viewer', 'member']) {
      const email = uniqueEmail(role);
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'actions passphrase' } });
      if (role === 'viewer')
        await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: viewerRole } });
      tokens[role] = (await signIn(app, ws.id, email, 'actions passphrase')).accessToken;
    }
    expect((await call(app, 'GET', '/api/v1/actions/', { token: tokens.viewer })).status).toBe(200);
    expect((await call(app, 'GET', '/api/v1/actions/templates', { token: tokens.viewer })).status).toBe(200);
    expect((await create({ name: 'By a viewer', code: ALLOW }, tokens.viewer)).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/actions/', { token: tokens.member })).status).toBe(403);

    const theirs = (await create({ name: 'Theirs', code: ALLOW }, other.apiKey)).body.data;
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/deploy'],
      ['POST', '/test'],
    ] as const) {
      const res = await call(app, method, `/api/v1/actions/${theirs.id}${path}`, {
        token: ws.apiKey,
        ...(method === 'POST' || method === 'PATCH' ? { body: method === 'PATCH' ? { name: 'Mine now' } : {} } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const mine = await call(app, 'GET', '/api/v1/actions/?per_page=100', { token: ws.apiKey });
    expect(JSON.stringify(mine.body.data)).not.toContain(theirs.id);
  });

  it('is described in the OpenAPI document at the spec’s exact paths', async () => {
    const doc = (await call(app, 'GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/v1/actions/'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/actions/{id}'])).toEqual(expect.arrayContaining(['get', 'patch', 'delete']));
    expect(Object.keys(doc.paths['/api/v1/actions/{id}/deploy'])).toEqual(['post']);
    expect(Object.keys(doc.paths['/api/v1/actions/{id}/test'])).toEqual(['post']);
    expect(doc.paths['/api/v1/actions']).toBeUndefined();
  });

  it('answers 503 to deploy and test when the sandbox cannot run, and everything else still works', async () => {
    const { id } = (await create({ name: 'Needs a sandbox', code: ALLOW })).body.data;
    const real = app.deps.sandbox;
    const missing = new ActionSandbox({ timeoutMs: 100, memoryMb: 32, log: createLogger('silent'), packageName: 'isolated-vm-not-here' });
    app.deps.sandbox = missing;
    try {
      for (const path of ['deploy', 'test']) {
        const res = await call(app, 'POST', `/api/v1/actions/${id}/${path}`, { token: ws.apiKey, body: {} });
        expect(res.status, path).toBe(503);
        expect(res.body.error.code, path).toBe('UNAVAILABLE');
        expect(res.body.error.message).toContain('isolated-vm');
      }
      expect((await call(app, 'GET', `/api/v1/actions/${id}`, { token: ws.apiKey })).body.data.status).toBe('draft');
      expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
    } finally {
      app.deps.sandbox = real;
      await missing.close();
    }
  });
});
