import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyProcedure } from '@trpc/server';
import { appRouter } from '../src/router.ts';
import type { Meta } from '../src/core/trpc.ts';
import { knowsTargetsOf } from '../src/core/refused-targets.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

const PASSWORD = 'refused writes passphrase';

/** CONTRACT: every write through the management API leaves an audit event, refused ones included. */
describe('refused management writes', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let viewer: { id: string; token: string };

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    const email = uniqueEmail('viewer');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: created.body.data.id, role_id: 'viewer' } });
    viewer = { id: created.body.data.id, token: (await signIn(app, ws.id, email, PASSWORD)).accessToken };
  });
  afterAll(() => app.close());

  async function failures(eventType: string) {
    const res = await call(app, 'GET', `/api/v1/audit/events/?event_type=${eventType}&outcome=failure&per_page=100`, { token: ws.apiKey });
    return res.body.data as {
      request_id: string;
      actor: { type: string; id: string };
      target: unknown;
      details: Record<string, unknown>;
    }[];
  }

  it('name the event type every management write records', () => {
    const procedures = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
    const unnamed = Object.entries(procedures)
      .filter(([, p]) => p._def.type === 'mutation' && (p._def.meta as Meta | undefined)?.permission)
      .filter(([, p]) => !(p._def.meta as Meta).audit)
      .map(([path]) => path);
    expect(unnamed).toEqual([]);
  });

  it('records a refusal by permission (403) with the caller, the request and the code', async () => {
    const res = await call(app, 'POST', '/api/v1/users', { token: viewer.token, body: { email: uniqueEmail(), password: PASSWORD } });
    expect(res.status).toBe(403);
    const row = (await failures('user.create')).find((e) => e.request_id === res.headers.get('x-request-id'));
    expect(row).toMatchObject({ actor: { type: 'user', id: viewer.id }, target: null, details: { reason: 'FORBIDDEN', status: 403 } });
  });

  it('records 404, 409 and 400 refusals, with no target when the id names nothing of the workspace', async () => {
    const missing = await call(app, 'PATCH', '/api/v1/users/usr_nobody', { token: ws.apiKey, body: { name: 'X' } });
    expect(missing.status).toBe(404);
    const group = { name: `Team ${uniqueEmail()}` };
    expect((await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: group })).status).toBe(201);
    const duplicate = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: group });
    expect(duplicate.status).toBe(409);
    const invalid = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: 'not an email', password: PASSWORD } });
    expect(invalid.status).toBe(400);

    const byRequest = (rows: Awaited<ReturnType<typeof failures>>, res: { headers: Headers }) =>
      rows.find((e) => e.request_id === res.headers.get('x-request-id'));
    expect(byRequest(await failures('user.update'), missing)).toMatchObject({
      actor: { type: 'api_key' },
      target: null,
      details: { reason: 'NOT_FOUND', status: 404 },
    });
    expect(byRequest(await failures('group.create'), duplicate)).toMatchObject({ details: { reason: 'CONFLICT', status: 409 } });
    expect(byRequest(await failures('user.create'), invalid)).toMatchObject({ details: { reason: 'BAD_REQUEST', status: 400 } });
  });

  it("records a user's refused changes to their own factors, password and sessions, once each", async () => {
    const email = uniqueEmail('own');
    const owner = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    const own = await signIn(app, ws.id, email, PASSWORD);
    const factor = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: own.accessToken, body: { name: 'Phone' } });
    expect(factor.status).toBe(201);
    const factorId = factor.body.data.factor.id as string;
    const factor_ = { type: 'factor', id: factorId };
    const refused = [
      ['mfa.factor_remove', 'user', 404, factor_, await call(app, 'DELETE', `/api/v1/mfa/factors/${factorId}`, { token: viewer.token })],
      [
        'mfa.factor_verify',
        'user',
        404,
        factor_,
        await call(app, 'POST', `/api/v1/mfa/factors/${factorId}/verify`, { token: viewer.token, body: { code: '123456' } }),
      ],
      [
        'mfa.factor_verify',
        'user',
        400,
        factor_,
        await call(app, 'POST', `/api/v1/mfa/factors/${factorId}/verify`, { token: own.accessToken, body: { code: '12' } }),
      ],
      [
        'mfa.factor_enroll',
        'api_key',
        403,
        null,
        await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: ws.apiKey, body: { name: 'Key' } }),
      ],
      [
        'auth.password_change',
        'user',
        400,
        null,
        await call(app, 'POST', '/api/v1/auth/password/change', {
          token: own.accessToken,
          body: { current_password: PASSWORD, new_password: 'short' },
        }),
      ],
      ['auth.session_revoke', 'user', 404, null, await call(app, 'DELETE', '/api/v1/auth/sessions/ses_nobody', { token: own.accessToken })],
      ['auth.logout', 'api_key', 403, null, await call(app, 'POST', '/api/v1/auth/logout', { token: ws.apiKey })],
    ] as const;
    // A wrong code is recorded by the verification itself (it keeps that row): still one row.
    const wrong = await call(app, 'POST', `/api/v1/mfa/factors/${factorId}/verify`, { token: own.accessToken, body: { code: '000000' } });
    expect(wrong.status).toBe(401);
    for (const [type, actor, status, target, res] of refused) {
      expect(res.status, type).toBe(status);
      const rows = (await failures(type)).filter((e) => e.request_id === res.headers.get('x-request-id'));
      expect(rows, `${type} ${status}`).toHaveLength(1);
      expect(rows[0]).toMatchObject({ actor: { type: actor }, target, details: { status } });
    }
    const wrongRows = (await failures('mfa.factor_verify')).filter((e) => e.request_id === wrong.headers.get('x-request-id'));
    expect(wrongRows).toEqual([
      expect.objectContaining({ actor: { type: 'user', id: owner.body.data.id }, details: { reason: 'wrong_code' } }),
    ]);
  });

  it('names the target its REST path holds when it is one of the workspace: 403, 409 and 400 alike', async () => {
    const user = (
      await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('target'), password: PASSWORD } })
    ).body.data.id as string;
    const roles = await call(app, 'GET', '/api/v1/roles?per_page=100', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id as string;
    const group = (await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: `Targets ${uniqueEmail()}` } })).body.data
      .id as string;
    const cases = [
      [
        'user.update',
        { type: 'user', id: user },
        403,
        await call(app, 'PATCH', `/api/v1/users/${user}`, { token: viewer.token, body: { name: 'X' } }),
      ],
      [
        'user.update',
        { type: 'user', id: user },
        400,
        await call(app, 'PATCH', `/api/v1/users/${user}`, { token: ws.apiKey, body: { name: 7 } }),
      ],
      [
        'user.delete',
        { type: 'user', id: ws.owner.id },
        409,
        await call(app, 'DELETE', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey }),
      ],
      // A role named by its key is recorded by its id, as its successes are.
      [
        'role.update',
        { type: 'role', id: viewerRole },
        409,
        await call(app, 'PATCH', '/api/v1/roles/viewer', { token: ws.apiKey, body: { name: 'X' } }),
      ],
      [
        'group.member_add',
        { type: 'group', id: group },
        404,
        await call(app, 'POST', `/api/v1/groups/${group}/members`, { token: ws.apiKey, body: { user_id: 'usr_nobody' } }),
      ],
      [
        'email_template.update',
        { type: 'email_template', id: 'password_reset' },
        403,
        await call(app, 'PUT', '/api/v1/email-templates/password_reset', { token: viewer.token, body: { subject: 'X' } }),
      ],
    ] as const;
    for (const [type, target, status, res] of cases) {
      expect(res.status, `${type} ${status}`).toBe(status);
      const row = (await failures(type)).find((e) => e.request_id === res.headers.get('x-request-id'));
      expect(row, `${type} ${status}`).toMatchObject({ target, details: { status } });
    }
  });

  it('names the target its body holds when its path names none, as its successes do', async () => {
    const other = await createWorkspace(app);
    const user = (
      await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('body-target'), password: PASSWORD } })
    ).body.data.id as string;
    const org = (await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: `Body ${uniqueEmail()}` } })).body.data
      .id as string;
    const cases = [
      ['role.assign', { type: 'user', id: user }, 403, ['POST', '/api/v1/roles/assign', viewer.token, { user_id: user, role_id: 'admin' }]],
      [
        'role.revoke',
        { type: 'user', id: user },
        403,
        ['POST', '/api/v1/roles/revoke', viewer.token, { user_id: user, role_id: 'member' }],
      ],
      [
        'role.revoke',
        { type: 'user', id: ws.owner.id },
        409,
        ['POST', '/api/v1/roles/revoke', ws.apiKey, { user_id: ws.owner.id, role_id: 'owner' }],
      ],
      [
        'role.assign',
        { type: 'user', id: user },
        404,
        ['POST', '/api/v1/roles/assign', ws.apiKey, { user_id: user, role_id: 'rol_nothing' }],
      ],
      // Another workspace's user, an unknown and a malformed id name nothing.
      ['role.assign', null, 404, ['POST', '/api/v1/roles/assign', ws.apiKey, { user_id: other.owner.id, role_id: 'admin' }]],
      [
        'role.assign',
        null,
        404,
        ['POST', '/api/v1/roles/assign', ws.apiKey, { user_id: 'usr_00000000000000000000000000', role_id: 'admin' }],
      ],
      ['role.assign', null, 404, ['POST', '/api/v1/roles/assign', ws.apiKey, { user_id: `usr_${'x'.repeat(300)}`, role_id: 'admin' }]],
      [
        'organization.portal_link',
        { type: 'organization', id: org },
        403,
        ['POST', '/api/v1/organizations/portal-link', viewer.token, { organization_id: org }],
      ],
      // By the id's alias too.
      [
        'organization.portal_link',
        { type: 'organization', id: org },
        403,
        ['POST', '/api/v1/organizations/portal-link', viewer.token, { organization: org }],
      ],
    ] as const;
    for (const [type, target, status, [method, path, token, body]] of cases) {
      const res = await call(app, method, path, { token, body });
      expect(res.status, `${type} ${status}`).toBe(status);
      const row = (await failures(type)).find((e) => e.request_id === res.headers.get('x-request-id'));
      expect(row, `${type} ${status} ${JSON.stringify(body).slice(0, 60)}`).toMatchObject({ target, details: { status } });
    }
    const log = await call(app, 'GET', '/api/v1/audit/events/?per_page=100', { token: ws.apiKey });
    expect(JSON.stringify(log.body.data)).not.toContain(other.owner.id);
  });

  it('names no target for an id of another workspace, an unknown or a malformed one: the log holds only its own ids', async () => {
    const other = await createWorkspace(app);
    const theirs = (
      await call(app, 'POST', '/api/v1/users', { token: other.apiKey, body: { email: uniqueEmail('theirs'), password: PASSWORD } })
    ).body.data.id as string;
    for (const id of [theirs, other.owner.id, 'usr_00000000000000000000000000', `usr_${'x'.repeat(300)}`]) {
      const res = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { name: 'X' } });
      expect(res.status).toBe(404);
      const row = (await failures('user.update')).find((e) => e.request_id === res.headers.get('x-request-id'));
      expect(row, id.slice(0, 40)).toMatchObject({ target: null, details: { reason: 'NOT_FOUND' } });
    }
    const log = await call(app, 'GET', '/api/v1/audit/events/?per_page=100', { token: ws.apiKey });
    expect(JSON.stringify(log.body.data)).not.toContain(theirs);
  });

  it('knows the target type of every audited path that names a resource', () => {
    const procedures = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
    const unknown = Object.values(procedures)
      .map((p) => p._def.meta as Meta | undefined)
      .filter((meta) => meta?.audit && meta.openapi && !knowsTargetsOf(meta.openapi.path))
      .map((meta) => meta?.openapi?.path);
    expect(unknown).toEqual([]);
  });

  it('still changes nothing else: no user, no success row', async () => {
    const email = uniqueEmail('refused');
    await call(app, 'POST', '/api/v1/users', { token: viewer.token, body: { email, password: PASSWORD } });
    const found = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token: ws.apiKey });
    expect(found.body.meta.total).toBe(0);
    const successes = await call(app, 'GET', '/api/v1/audit/events/?event_type=user.create&outcome=success&per_page=100', {
      token: ws.apiKey,
    });
    expect(successes.body.data.some((e: { details: { email?: string } }) => e.details.email === email)).toBe(false);
  });
});
