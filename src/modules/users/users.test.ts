import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../audit/audit.entity.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn } from '../../../test/helpers/auth.ts';
import { toldEvents } from '../../../test/helpers/events.ts';
import { whileHashesWait } from '../../../test/helpers/hashing.ts';
import { call, graphql, trpc } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('users: create, list, get through REST, tRPC and GraphQL', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Acme');
    other = await createWorkspace(app, 'Globex');
  });
  afterAll(() => app.close());

  async function auditEvents(workspaceId: string, eventType: string, targetId?: string) {
    const em = app.deps.orm.em.fork();
    return em.find(AuditEvent, { eventType, ...(targetId ? { targetId } : {}) }, { filters: { tenant: { workspaceId } } });
  }

  it('creates a user: 201, lower-cased email, no password in the answer, member role, audit row', async () => {
    const email = uniqueEmail('Ada').replace('ada', 'ADA');
    const res = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email, password: 'a perfectly fine password', name: 'Ada Lovelace' },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ email: email.toLowerCase(), name: 'Ada Lovelace', status: 'active' });
    expect(res.body.data.id).toMatch(/^usr_/);
    expect(JSON.stringify(res.body)).not.toMatch(/password|argon/i);
    expect(new Date(res.body.data.created_at).toISOString()).toBe(res.body.data.created_at);

    const [event, ...more] = await auditEvents(ws.id, 'user.create', res.body.data.id);
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({ outcome: 'success', actorType: 'api_key', targetType: 'user' });
    expect(event?.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('refuses a duplicate email (any case) with 409 CONFLICT and writes nothing', async () => {
    const email = uniqueEmail('dup');
    const first = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'password-123' } });
    expect(first.status).toBe(201);
    const again = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: email.toUpperCase(), password: 'password-123' },
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    // The conflict names its field, as a 400 names its field problems.
    expect(again.body.error.details).toEqual([{ path: 'email', message: 'belongs to another user' }]);
    const list = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(email)}`, { token: ws.apiKey });
    expect(list.body.meta.total).toBe(1);
    // The same email is free in another workspace: emails are unique per workspace only.
    const elsewhere = await call(app, 'POST', '/api/v1/users', { token: other.apiKey, body: { email, password: 'password-123' } });
    expect(elsewhere.status).toBe(201);
  });

  it('lets two concurrent creates of one email produce exactly one user', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.all(
      [1, 2, 3].map(() => call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'password-123' } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'CONFLICT')).toBe(true);
    // The audit row shares the transaction: the refused creates left none behind.
    const created = results.find((r) => r.status === 201)?.body.data.id;
    const events = (await auditEvents(ws.id, 'user.create')).filter((e) => e.details.email === email);
    expect(events.map((e) => e.targetId)).toEqual([created]);
  });

  it.each([
    [{ email: 'not-an-email', password: 'password-123' }, 'email'],
    [{ email: 'short@example.com', password: 'seven77' }, 'password'],
    [{ email: 'long@example.com', password: 'x'.repeat(129) }, 'password'],
    [{ password: 'password-123' }, 'email'],
    [{ email: 'nopass@example.com' }, 'password'],
  ])('rejects %j with 400 naming %s', async (body, field) => {
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it('accepts passwords of exactly 8 and 128 characters', async () => {
    for (const password of ['x'.repeat(8), 'y'.repeat(128)]) {
      const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('edge'), password } });
      expect(res.status).toBe(201);
    }
  });

  describe('listing', () => {
    let listWs: TestWorkspace;
    beforeAll(async () => {
      listWs = await createWorkspace(app, 'Listing');
      for (let i = 0; i < 24; i++) {
        const res = await call(app, 'POST', '/api/v1/users', {
          token: listWs.apiKey,
          body: { email: `person${String(i).padStart(2, '0')}@list.test`, password: 'password-123', name: i % 2 ? 'Odd One' : 'Even One' },
        });
        expect(res.status).toBe(201);
      }
    });

    it('pages with meta {total, page, per_page}, 20 by default, newest first', async () => {
      const first = await call(app, 'GET', '/api/v1/users', { token: listWs.apiKey });
      expect(first.status).toBe(200);
      expect(first.body.meta).toEqual({ total: 25, page: 1, per_page: 20 });
      expect(first.body.data).toHaveLength(20);
      expect(first.body.data[0].email).toBe('person23@list.test');
      const second = await call(app, 'GET', '/api/v1/users?page=2&per_page=20', { token: listWs.apiKey });
      expect(second.body.data).toHaveLength(5);
      const ids = new Set([...first.body.data, ...second.body.data].map((u: { id: string }) => u.id));
      expect(ids.size).toBe(25);
      const beyond = await call(app, 'GET', '/api/v1/users?page=9', { token: listWs.apiKey });
      expect(beyond.body).toEqual({ data: [], meta: { total: 25, page: 9, per_page: 20 } });
      const max = await call(app, 'GET', '/api/v1/users?per_page=100', { token: listWs.apiKey });
      expect(max.body.data).toHaveLength(25);
    });

    // Only plain decimal digits are a number: no exponent, hex, sign, spaces or empty value, though Number() reads them.
    it.each([
      'page=0',
      'page=-1',
      'per_page=0',
      'per_page=101',
      'per_page=abc',
      'page=abc',
      'page=1.5',
      'status=bogus',
      'page=1e0',
      'page=0x1',
      'page=%201',
      'page=1%20',
      'page=%2B5',
      'per_page=2e1',
      'per_page=',
    ])('answers ?%s with 400 BAD_REQUEST', async (qs) => {
      const res = await call(app, 'GET', `/api/v1/users?${qs}`, { token: listWs.apiKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    });

    it('reads page and per_page with leading zeros as the numbers they write', async () => {
      const res = await call(app, 'GET', '/api/v1/users?page=02&per_page=010', { token: listWs.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ total: 25, page: 2, per_page: 10 });
    });

    it('filters by q (email or name, case-insensitive, wildcards literal) and status', async () => {
      const byEmail = await call(app, 'GET', '/api/v1/users?q=PERSON0', { token: listWs.apiKey });
      expect(byEmail.body.meta.total).toBe(10);
      const byName = await call(app, 'GET', '/api/v1/users?q=odd&per_page=100', { token: listWs.apiKey });
      expect(byName.body.meta.total).toBe(12);
      const wildcard = await call(app, 'GET', '/api/v1/users?q=%25', { token: listWs.apiKey });
      expect(wildcard.body.meta.total).toBe(0);
      const active = await call(app, 'GET', '/api/v1/users?status=active', { token: listWs.apiKey });
      expect(active.body.meta.total).toBe(25);
      const locked = await call(app, 'GET', '/api/v1/users?status=locked', { token: listWs.apiKey });
      expect(locked.body.meta.total).toBe(0);
    });

    it('pages through search results with the total of all matches, also past the last page', async () => {
      const second = await call(app, 'GET', '/api/v1/users?q=person0&per_page=4&page=2', { token: listWs.apiKey });
      expect(second.body.meta).toEqual({ total: 10, page: 2, per_page: 4 });
      expect(second.body.data.map((u: { email: string }) => u.email)).toEqual([
        'person05@list.test',
        'person04@list.test',
        'person03@list.test',
        'person02@list.test',
      ]);
      const beyond = await call(app, 'GET', '/api/v1/users?q=person0&per_page=4&page=4', { token: listWs.apiKey });
      expect(beyond.body).toEqual({ data: [], meta: { total: 10, page: 4, per_page: 4 } });
      const none = await call(app, 'GET', '/api/v1/users?q=nobody-matches&status=active', { token: listWs.apiKey });
      expect(none.body).toEqual({ data: [], meta: { total: 0, page: 1, per_page: 20 } });
    });

    it('never shows another workspace’s users', async () => {
      const res = await call(app, 'GET', '/api/v1/users?q=list.test', { token: ws.apiKey });
      expect(res.body.meta.total).toBe(0);
    });
  });

  it('gets a user by id; another workspace’s id and malformed ids are 404', async () => {
    const own = await call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey });
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ id: ws.owner.id, email: ws.owner.email });

    for (const id of [other.owner.id, 'usr_00000000000000000000000000', 'nonsense', "usr_' or 1=1 --", 'x'.repeat(99)]) {
      const res = await call(app, 'GET', `/api/v1/users/${encodeURIComponent(id)}`, { token: ws.apiKey });
      expect(res.status, id).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it('answers an id too long to be one NOT_FOUND on every door, as REST does (CONTRACT: a malformed id is 404)', async () => {
    const long = `usr_${'x'.repeat(300)}`;
    const rest = await call(app, 'GET', `/api/v1/users/${long}`, { token: ws.apiKey });
    expect(rest.status).toBe(404);
    expect(rest.body.error.code).toBe('NOT_FOUND');

    const query = await trpc(app, 'query', 'users.get', { id: long }, ws.apiKey);
    expect(query.status).toBe(404);
    expect(query.body.error.data.appCode).toBe('NOT_FOUND');
    const mutation = await trpc(app, 'mutation', 'users.update', { id: long, name: 'Nobody' }, ws.apiKey);
    expect(mutation.status).toBe(404);
    expect(mutation.body.error.data.appCode).toBe('NOT_FOUND');

    const gql = await graphql(app, 'query ($id: ID!) { user(id: $id) { id } }', { id: long }, ws.apiKey);
    expect(gql.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');

    // A body member next to the id that is wrong too is still the caller's mistake to fix: 400.
    const both = await trpc(app, 'mutation', 'users.update', { id: long, status: 'sleeping' }, ws.apiKey);
    expect(both.status).toBe(400);
    expect(both.body.error.data.appCode).toBe('BAD_REQUEST');
  });

  it('serves the same procedures through tRPC', async () => {
    const created = await trpc(app, 'mutation', 'users.create', { email: uniqueEmail('trpc'), password: 'password-123' }, ws.apiKey);
    expect(created.status).toBe(200);
    const id = created.body.result.data.id;
    const got = await trpc(app, 'query', 'users.get', { id }, ws.apiKey);
    expect(got.body.result.data.id).toBe(id);
    const list = await trpc(app, 'query', 'users.list', undefined, ws.apiKey);
    expect(list.body.result.data.meta.per_page).toBe(20);
    const dup = await trpc(app, 'mutation', 'users.create', { email: created.body.result.data.email, password: 'password-123' }, ws.apiKey);
    expect(dup.status).toBe(409);
    expect(dup.body.error.data.appCode).toBe('CONFLICT');
    expect(dup.body.error.data.details).toEqual([{ path: 'email', message: 'belongs to another user' }]);
    const cross = await trpc(app, 'query', 'users.get', { id: other.owner.id }, ws.apiKey);
    expect(cross.body.error.data.appCode).toBe('NOT_FOUND');
  });

  it('serves the same procedures through GraphQL', async () => {
    const email = uniqueEmail('gql');
    const created = await graphql(
      app,
      'mutation($input: CreateUserInput!) { createUser(input: $input) { id email status createdAt } }',
      { input: { email, password: 'password-123', name: 'Grace' } },
      ws.apiKey,
    );
    expect(created.body.errors).toBeUndefined();
    const user = created.body.data.createUser;
    expect(user).toMatchObject({ email, status: 'active' });
    const got = await graphql(app, 'query($id: ID!) { user(id: $id) { id email name } }', { id: user.id }, ws.apiKey);
    expect(got.body.data.user).toEqual({ id: user.id, email, name: 'Grace' });
    const page = await graphql(app, '{ users(perPage: 1) { data { id } meta { total page perPage } } }', {}, ws.apiKey);
    expect(page.body.data.users.meta).toMatchObject({ page: 1, perPage: 1 });
    expect(page.body.data.users.data).toHaveLength(1);
    const dup = await graphql(
      app,
      'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      { input: { email, password: 'password-123' } },
      ws.apiKey,
    );
    expect(dup.body.errors?.[0]?.extensions).toMatchObject({
      code: 'CONFLICT',
      details: [{ path: 'email', message: 'belongs to another user' }],
    });
    const cross = await graphql(app, 'query($id: ID!) { user(id: $id) { id } }', { id: other.owner.id }, ws.apiKey);
    expect(cross.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
  });

  it('answers on GraphQL every field REST answers, camelCased, with the same values', async () => {
    const rest = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('same'), password: 'password-123', name: 'Same', metadata: { plan: 'pro', seats: 3 } },
    });
    const fields = Object.keys(rest.body.data).map((key) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()));
    const got = await graphql(app, `query($id: ID!) { user(id: $id) { ${fields.join(' ')} } }`, { id: rest.body.data.id }, ws.apiKey);
    expect(got.body.errors).toBeUndefined();
    expect(Object.values(got.body.data.user)).toEqual(Object.values(rest.body.data));
  });
});

describe('deleting and deactivating users', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('deletes a user: 200 {id, deleted}, their tokens die at once, then 404', async () => {
    const email = uniqueEmail('leaving');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'leaving passphrase' } });
    const session = await signIn(app, ws.id, email, 'leaving passphrase');
    const res = await call(app, 'DELETE', `/api/v1/users/${created.body.data.id}`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: created.body.data.id, deleted: true });
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: session.accessToken })).body.error.code).toBe('INVALID_TOKEN');
    expect((await call(app, 'GET', `/api/v1/users/${created.body.data.id}`, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'DELETE', `/api/v1/users/${created.body.data.id}`, { token: ws.apiKey })).status).toBe(404);
  });

  it('never deletes or deactivates the last owner (409)', async () => {
    const del = await call(app, 'DELETE', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey });
    expect([del.status, del.body.error.code]).toEqual([409, 'CONFLICT']);
    const off = await call(app, 'PATCH', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey, body: { status: 'deactivated' } });
    expect([off.status, off.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('cannot delete another workspace’s user (404)', async () => {
    const other = await createWorkspace(app);
    expect((await call(app, 'DELETE', `/api/v1/users/${other.owner.id}`, { token: ws.apiKey })).status).toBe(404);
  });
});

describe('user profile fields and mass assignment', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('keeps email_verified and metadata, shows mfa_enabled, and refuses privileged or unknown fields', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('profile'), password: 'profile passphrase', metadata: { plan: 'pro', seats: 3 } },
    });
    expect(created.body.data).toMatchObject({ email_verified: false, mfa_enabled: false, metadata: { plan: 'pro', seats: 3 } });
    const id = created.body.data.id;
    const patched = await call(app, 'PATCH', `/api/v1/users/${id}`, {
      token: ws.apiKey,
      body: { email_verified: true, metadata: { plan: 'team' } },
    });
    expect(patched.body.data).toMatchObject({ email_verified: true, metadata: { plan: 'team' } });
    for (const body of [
      { workspace_id: 'wsp_x' },
      { password_hash: 'x' },
      { id: 'usr_other', role: 'owner' },
      { metadata: 'not an object' },
      { status: 'blocked' },
    ]) {
      const res = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const huge = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { metadata: { blob: 'x'.repeat(20_000) } } });
    expect(huge.status).toBe(400);
    const listed = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(created.body.data.email)}`, { token: ws.apiKey });
    expect(listed.body.data[0]).toMatchObject({ email_verified: true, mfa_enabled: false });
  });

  it('merges metadata as Auth0 does: top-level keys replaced, null removes a key, nested objects replaced whole', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: {
        email: uniqueEmail('merge'),
        password: 'merge passphrase',
        metadata: { plan: 'pro', seats: 3, prefs: { theme: 'dark', lang: 'en' } },
      },
    });
    const id = created.body.data.id;
    const merged = await call(app, 'PATCH', `/api/v1/users/${id}`, {
      token: ws.apiKey,
      body: { metadata: { plan: 'team', seats: null, prefs: { theme: 'light' }, region: 'eu' } },
    });
    expect(merged.status).toBe(200);
    expect(merged.body.data.metadata).toEqual({ plan: 'team', prefs: { theme: 'light' }, region: 'eu' });
    // Removing a key that is not there is no change; the stored metadata reads back merged.
    const again = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { metadata: { seats: null } } });
    expect(again.body.data.metadata).toEqual({ plan: 'team', prefs: { theme: 'light' }, region: 'eu' });
    expect(again.body.data.updated_at).toBe(merged.body.data.updated_at);
    const read = await call(app, 'GET', `/api/v1/users/${id}`, { token: ws.apiKey });
    expect(read.body.data.metadata).toEqual({ plan: 'team', prefs: { theme: 'light' }, region: 'eu' });
    // tRPC merges the same way (one procedure behind every door).
    const viaTrpc = await trpc(app, 'mutation', 'users.update', { id, metadata: { region: null, tier: 1 } }, ws.apiKey);
    expect(viaTrpc.body.result.data.metadata).toEqual({ plan: 'team', prefs: { theme: 'light' }, tier: 1 });
  });

  it('holds the merged metadata to 16 KiB: two halves that each fit are refused together, and nothing is stored', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('limit'), password: 'limit passphrase', metadata: { a: 'x'.repeat(10_000) } },
    });
    const id = created.body.data.id;
    const over = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { metadata: { b: 'y'.repeat(10_000) } } });
    expect([over.status, over.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(over.body.error.details).toEqual([{ path: 'metadata', message: expect.stringContaining('16 KiB') }]);
    const read = await call(app, 'GET', `/api/v1/users/${id}`, { token: ws.apiKey });
    expect(Object.keys(read.body.data.metadata)).toEqual(['a']);
    // Replacing the big key instead fits.
    const swapped = await call(app, 'PATCH', `/api/v1/users/${id}`, {
      token: ws.apiKey,
      body: { metadata: { a: null, b: 'y'.repeat(10_000) } },
    });
    expect(swapped.status).toBe(200);
    expect(Object.keys(swapped.body.data.metadata)).toEqual(['b']);
  });

  it('changes nothing on a PATCH that changes nothing: same updated_at, no audit row, no user.updated event', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('noop'), password: 'noop passphrase', name: 'Noop', metadata: { plan: 'pro', prefs: { a: 1 } } },
    });
    const { id, updated_at, email } = created.body.data;
    const audits = async () => {
      const em = app.deps.orm.em.fork();
      return em.count(AuditEvent, { eventType: 'user.update', targetId: id }, { filters: { tenant: { workspaceId: ws.id } } });
    };
    const told = async () => (await toldEvents(app, ws.id, 'user.updated')).filter((payload) => payload.id === id).length;
    for (const body of [
      {},
      { name: 'Noop' },
      { email: email.toUpperCase(), email_verified: false, status: 'active' },
      { metadata: {} },
      { metadata: { plan: 'pro', prefs: { a: 1 }, gone: null } },
    ]) {
      const res = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect(res.body.data, JSON.stringify(body)).toEqual(created.body.data);
      expect(res.body.data.updated_at).toBe(updated_at);
    }
    expect(await audits()).toBe(0);
    expect(await told()).toBe(0);
    // A real change still writes both.
    const changed = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { metadata: { plan: 'team' } } });
    expect(changed.body.data.updated_at).not.toBe(updated_at);
    expect(await audits()).toBe(1);
    expect(await told()).toBe(1);
  });

  it('changes a user’s email: lower-cased, unverified again, signs in with it; one held by another user is 409', async () => {
    const password = 'moving passphrase';
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('moving'), password } });
    const id = created.body.data.id;
    await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { email_verified: true } });
    const next = uniqueEmail('moved');
    const moved = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { email: next.toUpperCase() } });
    expect(moved.status).toBe(200);
    expect(moved.body.data).toMatchObject({ id, email: next, email_verified: false });
    expect((await signIn(app, ws.id, next, password)).accessToken).toBeTruthy();

    const other = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('taken'), password } });
    const taken = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { email: other.body.data.email } });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await call(app, 'GET', `/api/v1/users/${id}`, { token: ws.apiKey })).body.data.email).toBe(next);
    const same = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { email: next } });
    expect(same.status).toBe(200);
    const bad = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { email: 'not an email' } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('holds no database connection while a new password waits for Argon2id: other requests are answered meanwhile', async () => {
    // More creations waiting for a hashing slot than the pool has connections.
    const emails = Array.from({ length: 6 }, () => uniqueEmail('queued'));
    const { meanwhile, results } = await whileHashesWait(
      emails.length,
      (i) => call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: emails[i], password: 'a perfectly fine password' } }),
      () => call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey }),
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual(emails.map(() => 201));
    for (const email of emails) expect((await login(app, ws.id, email, 'a perfectly fine password')).status).toBe(200);
  });
});
