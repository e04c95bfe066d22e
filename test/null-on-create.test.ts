import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from './helpers/auth.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call, graphql, trpc } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * core/absent-if-null.ts `absentIfNull`: an optional field of a create that its resource answers as nullable
 * takes `null` as "not sent", so a body copied from a GET (or a client that sends every key) is taken:
 * the same stored result as leaving the field out. Required fields still refuse null.
 */
describe('creates take null for an optional nullable field', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  interface Case {
    path: string;
    body: () => Promise<Record<string, unknown>>;
    /** The field sent as null, and what the answer shows for it (as when it is left out). */
    field: string;
    shown: (data: Record<string, unknown>) => unknown;
    expected: () => Promise<unknown>;
    token?: () => Promise<string>;
  }

  async function memberRoleId(): Promise<string> {
    const roles = await call(app, 'GET', '/api/v1/roles?per_page=100', { token: ws.apiKey });
    const member = (roles.body.data as { id: string; key: string }[]).find((role) => role.key === 'member');
    if (!member) throw new Error('the workspace lists no member role');
    return member.id;
  }
  async function groupId(name: string): Promise<string> {
    const res = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name } });
    return res.body.data.id;
  }

  const cases: Record<string, Case> = {
    'user name': {
      path: '/api/v1/users',
      body: async () => ({ email: uniqueEmail('null-name'), password: 'a long passphrase', name: null }),
      field: 'name',
      shown: (data) => data.name,
      expected: async () => null,
    },
    'group description': {
      path: '/api/v1/groups',
      body: async () => ({ name: 'Null description group', description: null }),
      field: 'description',
      shown: (data) => data.description,
      expected: async () => null,
    },
    'role description': {
      path: '/api/v1/roles',
      body: async () => ({ name: 'Null description role', description: null }),
      field: 'description',
      shown: (data) => data.description,
      expected: async () => null,
    },
    'vault object description': {
      path: '/api/v1/vault/objects/',
      body: async () => ({ name: 'null-description-secret', value: 's3cret', description: null }),
      field: 'description',
      shown: (data) => data.description,
      expected: async () => null,
    },
    'webhook description': {
      path: '/api/v1/webhooks/',
      body: async () => ({ url: 'http://127.0.0.1:9/hook', description: null }),
      field: 'description',
      shown: (data) => data.description,
      expected: async () => null,
    },
    'invitation role_id (the default role)': {
      path: '/api/v1/invitations',
      body: async () => ({ email: uniqueEmail('null-role'), role_id: null }),
      field: 'role_id',
      shown: (data) => data.role_id,
      expected: memberRoleId,
    },
    'access request justification': {
      path: '/api/v1/iga/requests',
      body: async () => ({ entitlement_id: await groupId('Null justification group'), justification: null }),
      field: 'justification',
      shown: (data) => data.justification,
      expected: async () => null,
      token: async () => (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken,
    },
    'access review due_at': {
      path: '/api/v1/iga/reviews',
      body: async () => ({ name: 'Null due review', due_at: null }),
      field: 'due_at',
      shown: (data) => data.due_at,
      expected: async () => null,
    },
  };

  for (const [name, c] of Object.entries(cases)) {
    it(`${name}: null is taken as absent`, async () => {
      const token = c.token ? await c.token() : ws.apiKey;
      const body = await c.body();
      expect(body[c.field]).toBeNull();
      const res = await call(app, 'POST', c.path, { token, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(c.shown(res.body.data)).toEqual(await c.expected());
    });
  }

  it('a user body copied from a GET creates another user, on REST, tRPC and GraphQL alike', async () => {
    const first = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('copy'), password: 'a long passphrase' },
    });
    expect(first.status).toBe(201);
    expect(first.body.data.name).toBeNull();
    const copied = { email: uniqueEmail('copy'), password: 'a long passphrase', name: first.body.data.name, email_verified: false };
    const rest = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: copied });
    expect(rest.status, JSON.stringify(rest.body)).toBe(201);
    const viaTrpc = await trpc(app, 'mutation', 'users.create', { ...copied, email: uniqueEmail('copy') }, ws.apiKey);
    expect(viaTrpc.status, JSON.stringify(viaTrpc.body)).toBe(200);
    const viaGraphql = await graphql(
      app,
      'mutation ($email: String!) { createUser(input: { email: $email, password: "a long passphrase", name: null }) { name } }',
      { email: uniqueEmail('copy') },
      ws.apiKey,
    );
    expect(viaGraphql.body.errors, JSON.stringify(viaGraphql.body)).toBeUndefined();
    expect(viaGraphql.body.data?.createUser).toEqual({ name: null });
  });

  it('a required field still refuses null', async () => {
    const res = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: null, description: null } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(['name']);
  });
});
