import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedureMeta } from '../src/router.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * Who may call what, for every management endpoint, from the outside: owner, admin and API key may
 * read and write; a viewer only reads; a member neither; no credential is 401. Writes are sent with
 * ids that do not exist or bodies that do not validate, so passing authorization changes nothing.
 */
describe('role matrix of the management API', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const tokens: Record<string, string | undefined> = {};

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const roleId = (key: string) => roles.body.data.find((r: { key: string }) => r.key === key).id as string;
    tokens.owner = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    tokens.apiKey = ws.apiKey;
    tokens.none = undefined;
    for (const role of ['admin', 'viewer', 'member']) {
      const email = uniqueEmail(role);
      const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'matrix passphrase' } });
      if (role !== 'member') {
        await call(app, 'POST', '/api/v1/roles/assign', {
          token: ws.apiKey,
          body: { user_id: created.body.data.id, role_id: roleId(role) },
        });
      }
      tokens[role] = (await signIn(app, ws.id, email, 'matrix passphrase')).accessToken;
    }
  });
  afterAll(() => app.close());

  const endpoints = [...procedureMeta.values()]
    .map((meta) => meta.openapi)
    .filter((o): o is NonNullable<typeof o> => !!o?.protect && o.path.startsWith('/api/v1/') && !/^\/api\/v1\/(auth|mfa)\//.test(o.path));

  /** Reads a viewer may not make: secret values are for owners, admins and API keys (spec: Authentication rule 3). */
  const NOT_FOR_VIEWERS = new Set(['GET /api/v1/vault/objects/{id}/reveal']);

  /** Calls any signed-in user makes for themself (asking for access): every user may, an API key may not. */
  const SELF_SERVICE = new Set(['POST /api/v1/iga/requests']);

  /** Reads a member may make about their own things (their access requests); the others read everything. */
  const OWN_FOR_MEMBERS = new Set(['GET /api/v1/iga/requests', 'GET /api/v1/iga/requests/{id}']);

  /** Writes on a thing of one's own (cancelling one's access request): every caller is let through to find it; the handler decides. */
  const OWN_THINGS = new Set(['POST /api/v1/iga/requests/{id}/cancel']);

  const FAKE: Record<string, string> = { id: 'zzz_00000000000000000000000000', user_id: 'usr_00000000000000000000000000' };

  it('covers the management API', () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(20);
  });

  it.each(endpoints.map((o) => [o.method, o.path] as const))('%s %s', async (method, path) => {
    const url = path.replace(/\{(\w+)\}/g, (_, name: string) => FAKE[name] ?? 'x');
    const reads = method === 'GET';
    const selfService = SELF_SERVICE.has(`${method} ${path}`);
    const ownThing = OWN_THINGS.has(`${method} ${path}`);
    const expectations: Record<string, 'allowed' | 403 | 401> = {
      owner: 'allowed',
      admin: 'allowed',
      apiKey: selfService ? 403 : 'allowed',
      viewer: selfService || ownThing || (reads && !NOT_FOR_VIEWERS.has(`${method} ${path}`)) ? 'allowed' : 403,
      member: selfService || ownThing || OWN_FOR_MEMBERS.has(`${method} ${path}`) ? 'allowed' : 403,
      none: 401,
    };
    for (const [who, expected] of Object.entries(expectations)) {
      const res = await call(app, method, url, { token: tokens[who], ...(reads || method === 'DELETE' ? {} : { body: {} }) });
      if (expected === 'allowed') expect([401, 403], `${who} ${method} ${url} → ${res.status}`).not.toContain(res.status);
      else expect(res.status, `${who} ${method} ${url}`).toBe(expected);
    }
  });
});
