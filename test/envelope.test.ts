import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEvent } from '../src/modules/audit/audit.entity.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call, graphql, trpc, type ApiResponse } from './helpers/http.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';
import { needsRedis } from './helpers/needs.ts';

/** The envelope and X-Request-ID on every kind of answer, through REST; the same codes on tRPC and GraphQL. */
describe('envelope and request ids', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  function expectError(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));
  }

  it('wraps a success in data and sets X-Request-ID', async () => {
    const res = await call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(ws.owner.id);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a well-formed caller request id and replaces a bad one', async () => {
    const good = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey, headers: { 'x-request-id': 'abc.DEF_123-x' } });
    expect(good.headers.get('x-request-id')).toBe('abc.DEF_123-x');
    const bad = await call(app, 'GET', '/api/v1/nope', { headers: { 'x-request-id': 'has spaces and ü' } });
    expect(bad.headers.get('x-request-id')).not.toBe('has spaces and ü');
    expect(bad.body.meta.request_id).toBe(bad.headers.get('x-request-id'));
    const long = await call(app, 'GET', '/api/v1/nope', { headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers.get('x-request-id')).not.toBe('a'.repeat(129));
  });

  it('answers HEAD as the GET of the same path, without a body', async () => {
    const get = await fetch(`${app.url}/api/v1/users/${ws.owner.id}`, { headers: { authorization: `Bearer ${ws.apiKey}` } });
    const head = await fetch(`${app.url}/api/v1/users/${ws.owner.id}`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${ws.apiKey}` },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
    const anonymous = await fetch(`${app.url}/api/v1/users/${ws.owner.id}`, { method: 'HEAD' });
    expect(anonymous.status).toBe(401);
    expect(
      (
        await fetch(`${app.url}/api/v1/users/usr_00000000000000000000000000`, {
          method: 'HEAD',
          headers: { authorization: `Bearer ${ws.apiKey}` },
        })
      ).status,
    ).toBe(404);
  });

  it('answers an unknown path 404 NOT_FOUND in the envelope', async () => {
    expectError(await call(app, 'GET', '/api/v1/no-such-thing'), 404, 'NOT_FOUND');
    expectError(await call(app, 'DELETE', '/totally/elsewhere'), 404, 'NOT_FOUND');
    const belowGraphQL = await call(app, 'POST', '/graphql/nope', { body: { query: '{ __typename }' } });
    expectError(belowGraphQL, 404, 'NOT_FOUND');
    expect(belowGraphQL.body.error.message).toBe('No route for POST /graphql/nope');
    expectError(await call(app, 'GET', '/graphql/nope/deeper'), 404, 'NOT_FOUND');
  });

  it('answers a method a known REST path does not take 405 with Allow, in the envelope; an unknown path stays 404', async () => {
    const collection = await call(app, 'PUT', '/api/v1/users', { token: ws.apiKey, body: {} });
    expectError(collection, 405, 'BAD_REQUEST');
    expect(collection.headers.get('allow')).toBe('GET, POST, HEAD, OPTIONS');
    const item = await call(app, 'POST', `/api/v1/users/${ws.owner.id}`);
    expectError(item, 405, 'BAD_REQUEST');
    expect(item.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH']);
    const login = await call(app, 'GET', '/api/v1/auth/login');
    expectError(login, 405, 'BAD_REQUEST');
    expect(login.headers.get('allow')).toBe('POST, OPTIONS');
    expectError(await call(app, 'DELETE', '/api/v1/audit/events/', { token: ws.apiKey }), 405, 'BAD_REQUEST');
    expectError(await call(app, 'PUT', '/api/v1/no-such-thing'), 404, 'NOT_FOUND');
    // An item without a read endpoint is not there to read, whatever its id: 404, not 405.
    const key = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: 'Reader' } });
    expectError(await call(app, 'GET', `/api/v1/api-keys/${key.body.data.id}`, { token: ws.apiKey }), 404, 'NOT_FOUND');
    expectError(await call(app, 'PUT', `/api/v1/api-keys/${key.body.data.id}`, { token: ws.apiKey, body: {} }), 405, 'BAD_REQUEST');
  });

  it('challenges a 401 of the bearer credential with WWW-Authenticate (RFC 6750), and no other 401', async () => {
    const realm = `Bearer realm="${app.url}"`;
    const challenged: [string, Promise<ApiResponse<any>>, string, string][] = [
      ['no credential', call(app, 'GET', '/api/v1/users'), 'UNAUTHORIZED', realm],
      ['another scheme', call(app, 'GET', '/api/v1/users', { headers: { authorization: `Basic ${btoa('a:b')}` } }), 'UNAUTHORIZED', realm],
      ['unknown API key', call(app, 'GET', '/api/v1/users', { token: 'sk_nope' }), 'INVALID_TOKEN', `${realm}, error="invalid_token"`],
      [
        'forged JWT',
        call(app, 'GET', '/api/v1/auth/me', { token: 'eyJhbGciOiJub25lIn0.e30.' }),
        'INVALID_TOKEN',
        `${realm}, error="invalid_token"`,
      ],
      [
        'wrong platform token',
        call(app, 'POST', '/platform/v1/workspaces', { token: 'not-the-platform-token', body: {} }),
        'INVALID_TOKEN',
        `${realm}, error="invalid_token"`,
      ],
    ];
    for (const [label, answer, code, challenge] of challenged) {
      const res = await answer;
      expect([res.status, res.body.error.code, res.headers.get('www-authenticate')], label).toEqual([401, code, challenge]);
    }
    // A token whose session has ended: the credential is refused, so the challenge says so.
    const session = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: session.accessToken, body: {} })).status).toBe(200);
    const ended = await call(app, 'GET', '/api/v1/auth/me', { token: session.accessToken });
    expect([ended.status, ended.headers.get('www-authenticate')]).toEqual([401, `${realm}, error="invalid_token"`]);
    // tRPC's answer carries it too.
    const viaTrpc = await trpc(app, 'query', 'users.list', {});
    expect([viaTrpc.status, viaTrpc.headers.get('www-authenticate')]).toEqual([401, realm]);

    // What fails in a body (a password, a refresh token, a reset link) is no bearer failure: no challenge.
    const tenant = { 'x-tenant-id': ws.id };
    const unchallenged: [string, Promise<ApiResponse<any>>, string][] = [
      [
        'wrong password',
        call(app, 'POST', '/api/v1/auth/login', { headers: tenant, body: { email: ws.owner.email, password: 'not the passphrase' } }),
        'INVALID_CREDENTIALS',
      ],
      [
        'unknown refresh token',
        call(app, 'POST', '/api/v1/auth/refresh', { token: ws.apiKey, body: { refresh_token: 'rt_nope' } }),
        'INVALID_TOKEN',
      ],
      [
        'unknown reset link',
        call(app, 'POST', '/api/v1/auth/password/reset', { headers: tenant, body: { token: 'nope', password: 'a long new password' } }),
        'INVALID_TOKEN',
      ],
    ];
    for (const [label, answer, code] of unchallenged) {
      const res = await answer;
      expect([res.status, res.body.error.code, res.headers.get('www-authenticate')], label).toEqual([401, code, null]);
    }
  });

  it('answers malformed JSON 400 BAD_REQUEST', async () => {
    const malformed = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw: '{"email":' });
    expectError(malformed, 400, 'BAD_REQUEST');
    expect(malformed.body.error.message).toBe('The request body is not valid JSON');
  });

  it('says a valid JSON body that is not an object must be one, not that it is invalid JSON', async () => {
    for (const raw of ['null', ' 5', '"x"', 'true']) {
      const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.error.message, raw).toBe('The request body must be a JSON object');
    }
  });

  it('answers a body over 1 MiB 413 with code BAD_REQUEST', async () => {
    const raw = JSON.stringify({ email: 'x@example.com', password: 'p'.repeat(1024 * 1024 + 10) });
    expectError(await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw }), 413, 'BAD_REQUEST');
  });

  it('answers a compressed body that does not decompress 400 BAD_REQUEST, not 500; a good one is read', async () => {
    const json = JSON.stringify({ email: 'gzip@example.com', password: 'correct horse battery' });
    const gzip = gzipSync(json);
    const send = (encoding: string, body: string | Buffer) =>
      fetch(`${app.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding, 'x-tenant-id': ws.id },
        body: typeof body === 'string' ? body : new Uint8Array(body),
      });
    for (const [encoding, body] of [
      ['gzip', json],
      ['deflate', json],
      ['br', json],
      ['gzip', gzip.subarray(0, gzip.length - 5)],
    ] as const) {
      const res = await send(encoding, body);
      const parsed = (await res.json()) as { error: { code: string }; meta: { request_id: string } };
      expect([encoding, res.status, parsed.error.code]).toEqual([encoding, 400, 'BAD_REQUEST']);
      expect(parsed.meta.request_id).toBe(res.headers.get('x-request-id'));
    }
    // A whole gzip body is decoded and read: an unknown user, so the sign-in's own answer.
    expect((await send('gzip', gzip)).status).toBe(401);
  });

  it('answers a GraphQL body over 1 MiB 413 BAD_REQUEST in the GraphQL error shape, without a credential too', async () => {
    const query = `{ users { meta { total } } } # ${'x'.repeat(20 * 1024 * 1024)}`;
    for (const token of [undefined, ws.apiKey]) {
      const res = await call(app, 'POST', '/graphql', { token, raw: JSON.stringify({ query }) });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST' } }] });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    // Just under the limit is read and answered as usual.
    const under = JSON.stringify({ query: `{ users { meta { total } } } # ${'x'.repeat(1024 * 1024 - 100)}` });
    const ok = await call(app, 'POST', '/graphql', { token: ws.apiKey, raw: under });
    expect(ok.status).toBe(200);
    expect(ok.body.data.users.meta.total).toBeGreaterThan(0);
  });

  it('cuts off a streamed GraphQL body (no Content-Length) once it passes 1 MiB', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"query":"{ users { meta { total } } } #'));
      },
      pull(controller) {
        // 20 MiB at most: a server that reads it all answers anyway, and the test fails on the status.
        if (sent >= 20 * 1024 * 1024) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${app.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' });
    expect(res.status).toBe(413);
    expect((await res.json()).errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(sent).toBeLessThan(20 * 1024 * 1024);
  });

  it('answers non-JSON bodies and non-object JSON bodies 400 BAD_REQUEST, as the spec maps the code', async () => {
    const text = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw: 'email=x', headers: { 'content-type': 'text/plain' } });
    expectError(text, 400, 'BAD_REQUEST');
    expect(text.body.error.message).toBe('Send the body as application/json');
    const array = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw: '[1,2]' });
    expectError(array, 400, 'BAD_REQUEST');
  });

  it('matches paths with or without a trailing slash; a malformed escape in an id is 404', async () => {
    const slash = await call(app, 'GET', '/api/v1/users/', { token: ws.apiKey });
    expect(slash.status).toBe(200);
    expect(slash.body.meta.per_page).toBe(20);
    expectError(await call(app, 'GET', '/api/v1/users/%E0%A4%A', { token: ws.apiKey }), 404, 'NOT_FOUND');
    expectError(await call(app, 'PUT', '/api/v1/users/', { token: ws.apiKey, body: {} }), 405, 'BAD_REQUEST');
  });

  it('rejects unknown body fields with 400 and names each by its path in details', async () => {
    const res = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: 'strict@example.com', password: 'long enough pass', is_admin: true, role: 'admin' },
    });
    expectError(res, 400, 'BAD_REQUEST');
    expect(res.body.error.details).toEqual([
      { path: 'is_admin', message: 'is not a known field' },
      { path: 'role', message: 'is not a known field' },
    ]);
    // Inside a nested object, the path goes through it.
    const nested = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Strict Inc', sso: { enabled: true, nope: 1 } },
    });
    expectError(nested, 400, 'BAD_REQUEST');
    expect(nested.body.error.details).toEqual([{ path: 'sso.nope', message: 'is not a known field' }]);
    // A call whose body has no members of its own (the id is in the path) names the member too.
    const bodiless = await call(app, 'POST', '/api/v1/applications/app_00000000000000000000000000/rotate-secret', {
      token: ws.apiKey,
      body: { secret: 'mine' },
    });
    expectError(bodiless, 400, 'BAD_REQUEST');
    expect(bodiless.body.error.details).toEqual([{ path: 'secret', message: 'is not a known field' }]);
  });

  it('refuses a body member named as a path parameter (400, named in details) instead of ignoring it', async () => {
    const user = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: 'path-param@example.com', password: 'long enough pass', name: 'Before' },
    });
    const other = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: 'path-param-other@example.com', password: 'long enough pass', name: 'Other' },
    });
    const group = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Path params' } });
    const org = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Path Params Inc' } });
    const userId = user.body.data.id as string;
    const inPath = { path: 'id', message: 'is given by the path; leave it out of the body' };
    const unknownSecret = { path: 'secret', message: 'is not a known field' };
    const calls: [string, string, Record<string, unknown>, { path: string; message: string }[]][] = [
      ['PATCH', `/api/v1/users/${userId}`, { id: other.body.data.id, name: 'After' }, [inPath]],
      // The same id again is refused too: the path alone names the resource.
      ['PATCH', `/api/v1/users/${userId}`, { id: userId, name: 'After' }, [inPath]],
      ['PATCH', `/api/v1/groups/${group.body.data.id}`, { id: 'grp_00000000000000000000000000', name: 'Renamed' }, [inPath]],
      ['PATCH', `/api/v1/organizations/${org.body.data.id}`, { id: org.body.data.id, name: 'Renamed Inc' }, [inPath]],
      ['PATCH', '/api/v1/roles/rol_00000000000000000000000000', { id: 'x', name: 'Renamed' }, [inPath]],
      ['PATCH', '/api/v1/applications/app_00000000000000000000000000', { id: 'x', name: 'Renamed' }, [inPath]],
      ['PATCH', '/api/v1/webhooks/whk_00000000000000000000000000', { id: 'x', enabled: false }, [inPath]],
      ['PATCH', '/api/v1/idp-attributes/locale', { key: 'email', enabled: true }, [{ ...inPath, path: 'key' }]],
      ['POST', `/api/v1/groups/${group.body.data.id}/members`, { id: 'grp_00000000000000000000000000', user_id: userId }, [inPath]],
      // An input that is only the path's id (a loose schema) names it too, next to another unknown member.
      ['POST', '/api/v1/applications/app_00000000000000000000000000/rotate-secret', { id: 'x', secret: 'mine' }, [inPath, unknownSecret]],
    ];
    for (const [method, path, body, details] of calls) {
      const res = await call(app, method, path, { token: ws.apiKey, body });
      expectError(res, 400, 'BAD_REQUEST');
      expect(res.body.error.details, `${method} ${path}`).toEqual(details);
    }
    // Nothing was changed by the refused calls.
    const after = await call(app, 'GET', `/api/v1/users/${userId}`, { token: ws.apiKey });
    expect(after.body.data.name).toBe('Before');
    const members = await call(app, 'GET', `/api/v1/groups/${group.body.data.id}/members`, { token: ws.apiKey });
    expect(members.body.meta.total).toBe(0);
    // The path's id alone still works; tRPC (and GraphQL) take the id in the input as before.
    const patched = await call(app, 'PATCH', `/api/v1/users/${userId}`, { token: ws.apiKey, body: { name: 'By REST' } });
    expect(patched.body.data.name).toBe('By REST');
    const viaTrpc = await trpc(app, 'mutation', 'users.update', { id: userId, name: 'By tRPC' }, ws.apiKey);
    expect(viaTrpc.body.result.data.name).toBe('By tRPC');
    const viaGraphql = await graphql(app, 'query ($id: ID!) { user(id: $id) { name } }', { id: userId }, ws.apiKey);
    expect(viaGraphql.body.data.user.name).toBe('By tRPC');
  });

  it('answers a missing credential 401 UNAUTHORIZED and a bad one 401 INVALID_TOKEN', async () => {
    expectError(await call(app, 'GET', '/api/v1/users'), 401, 'UNAUTHORIZED');
    expectError(await call(app, 'GET', '/api/v1/users', { headers: { authorization: 'Basic abc' } }), 401, 'UNAUTHORIZED');
    expectError(await call(app, 'GET', '/api/v1/users', { token: 'sk_not_a_real_key_000000000' }), 401, 'INVALID_TOKEN');
    expectError(await call(app, 'GET', '/api/v1/users', { token: 'eyJhbGciOiJub25lIn0.e30.' }), 401, 'INVALID_TOKEN');
  });

  it('surfaces the same codes through tRPC and GraphQL', async () => {
    const t401 = await trpc(app, 'query', 'users.list', {});
    expect(t401.status).toBe(401);
    expect(t401.body.error.data.appCode).toBe('UNAUTHORIZED');
    const tBad = await trpc(app, 'query', 'users.list', { per_page: 0 }, ws.apiKey);
    expect(tBad.status).toBe(400);
    expect(tBad.body.error.data.appCode).toBe('BAD_REQUEST');
    const t404 = await trpc(app, 'query', 'users.get', { id: 'usr_nope' }, ws.apiKey);
    expect(t404.body.error.data.appCode).toBe('NOT_FOUND');

    const g401 = await graphql(app, '{ users { meta { total } } }', {}, 'sk_not_a_real_key_000000000');
    expect(g401.body.errors?.[0]?.extensions.code).toBe('INVALID_TOKEN');
    const g404 = await graphql(app, 'query($id: ID!) { user(id: $id) { id } }', { id: 'usr_nope' }, ws.apiKey);
    expect(g404.body.errors?.[0]?.extensions.code).toBe('NOT_FOUND');
    const gBad = await graphql(app, '{ users(perPage: 101) { meta { total } } }', {}, ws.apiKey);
    expect(gBad.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
  });

  it('sets security headers and hides the framework', async () => {
    const res = await call(app, 'GET', '/healthz');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-powered-by')).toBeNull();
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('carries X-Request-ID on GraphQL and tRPC answers too', async () => {
    const g = await graphql(app, '{ users { meta { total } } }', {}, ws.apiKey);
    expect(g.headers.get('x-request-id')).toBeTruthy();
    const t = await trpc(app, 'query', 'users.list', {}, ws.apiKey);
    expect(t.headers.get('x-request-id')).toBeTruthy();
  });

  it('does not serve GraphiQL outside development', async () => {
    const res = await call(app, 'GET', '/graphql', { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-type') ?? '').not.toContain('text/html');
  });

  it('serves the OpenAPI document', async () => {
    const res = await call(app, 'GET', '/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toContain('/api/v1/users/{id}');
  });
});

describe('global rate limit', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('answers the 1,001st call in a minute from one IP 429 RATE_LIMITED with Retry-After', async () => {
    const statuses: number[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(Array.from({ length: 100 }, () => call(app, 'GET', '/api/v1/nope')));
      statuses.push(...results.map((r) => r.status));
    }
    expect(statuses.every((s) => s === 404)).toBe(true);
    const limited = await call(app, 'GET', '/api/v1/nope');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('RATE_LIMITED');
    expect(limited.body.meta.request_id).toBe(limited.headers.get('x-request-id'));
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('1000');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    // The OAuth endpoints answer in RFC 6749's shape, readable by a browser app (CORS) as their own answers are.
    const oauth = await call(app, 'GET', '/oauth/userinfo', { headers: { origin: 'https://spa.example.com' } });
    expect(oauth.status).toBe(429);
    expect(oauth.body).toEqual({ error: 'RATE_LIMITED', error_description: expect.any(String) });
    expect(oauth.headers.get('access-control-allow-origin')).toBe('*');
    expect(oauth.headers.get('access-control-expose-headers')).toContain('Retry-After');
    // Health probes stay outside the limit, so a load balancer never marks a busy instance dead.
    expect((await call(app, 'GET', '/healthz')).status).toBe(200);
  });
});

/** Two instances on one Redis: the global limit's batched counts add up across both. */
needsRedis(describe, 'two instances share the global limit through it')('global rate limit across instances', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const shared = { RATE_LIMIT_PREFIX: `test:shared:${Date.now()}` };
    a = await startTestApp(shared);
    b = await startTestApp(shared);
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  const burst = async (app: TestApp, n: number) => {
    const statuses = await Promise.all(
      Array.from({ length: n }, () => call(app, 'GET', '/api/v1/nope', { headers: { 'x-forwarded-for': '203.0.113.77' } })),
    );
    return statuses.map((r) => r.status);
  };

  it('refuses the 1,001st call of a minute whichever instance it reaches, once the counts are shared', async () => {
    expect(new Set(await burst(a, 600))).toEqual(new Set([404]));
    await a.deps.rateLimits.flush();
    expect(new Set(await burst(b, 400))).toEqual(new Set([404]));
    await b.deps.rateLimits.flush();
    expect(await burst(b, 1)).toEqual([429]);
    // A last read the shared total before B's calls: it learns them at its next flush, then refuses too.
    await burst(a, 1);
    await a.deps.rateLimits.flush();
    expect(await burst(a, 1)).toEqual([429]);
  });
});

describe('server-side failure', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'silent' });
    ws = await createWorkspace(app);
    // The database goes away under a running server: every door must answer INTERNAL, showing nothing.
    await app.deps.orm.close(true);
  });
  afterAll(() => app.close());

  it('answers 500 INTERNAL in the envelope without internals, on every door', async () => {
    const res = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL');
    expect(res.body.error.message).not.toMatch(/pool|knex|connection|select/i);
    expect(res.body.meta.request_id).toBe(res.headers.get('x-request-id'));

    const t = await trpc(app, 'query', 'users.list', {}, ws.apiKey);
    expect(t.status).toBe(500);
    expect(t.body.error.data.appCode).toBe('INTERNAL');
    expect(JSON.stringify(t.body)).not.toMatch(/stack|knex/i);

    const g = await graphql(app, '{ users { meta { total } } }', {}, ws.apiKey);
    expect(g.body.errors?.[0]?.extensions.code).toBe('INTERNAL');

    const ready = await call(app, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.code).toBe('UNAVAILABLE');
  });
});

describe('client IP', () => {
  async function auditIp(app: TestApp, ws: TestWorkspace, requestId: string) {
    const em = app.deps.orm.em.fork();
    const [event] = await em.find(AuditEvent, { requestId }, { filters: { tenant: { workspaceId: ws.id } } });
    return event?.ip;
  }

  // One app at a time: without DATABASE_URL the tests share a single-connection embedded database.
  it.each([
    ['unset', { TRUST_PROXY: '' }, /^(::ffff:)?127\.0\.0\.1$/],
    ['loopback', { TRUST_PROXY: 'loopback' }, /^203\.0\.113\.7$/],
  ])('with TRUST_PROXY %s, the audited client IP matches %s', async (_label, env, expected) => {
    const app = await startTestApp(env);
    try {
      const ws = await createWorkspace(app);
      const requestId = `ip-test-${Date.now()}`;
      const res = await call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        headers: { 'x-forwarded-for': '203.0.113.7', 'x-request-id': requestId },
        body: { email: `ip-${Date.now()}@example.com`, password: 'password-123' },
      });
      expect(res.status).toBe(201);
      expect(await auditIp(app, ws, requestId)).toMatch(expected);
    } finally {
      await app.close();
    }
  });
});

describe('development mode', () => {
  it('serves GraphiQL at /graphql to a browser', async () => {
    const app = await startTestApp({ NODE_ENV: 'development' });
    try {
      const res = await call(app, 'GET', '/graphql', { headers: { accept: 'text/html' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(String(res.body)).toContain('GraphiQL');
    } finally {
      await app.close();
    }
  });
});

describe('text the database cannot store', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'NUL');
  });
  afterAll(() => app.close());

  it('answers 400 BAD_REQUEST, not 500, for a NUL character in a query filter or a body string', async () => {
    const query = await call(app, 'GET', '/api/v1/audit/events/?event_type=a%00b', { token: ws.apiKey });
    expect([query.status, query.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const body = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'nul\u0000group' } });
    expect([body.status, body.body.error.code]).toEqual([400, 'BAD_REQUEST']);
  });

  it('answers 400 BAD_REQUEST, not 500, for an unpaired UTF-16 surrogate in a body string (no UTF-8 form exists)', async () => {
    const { accessToken: token } = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const factor = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token, body: { name: '\ud800' } });
    expect([factor.status, factor.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const trailing = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'group\udc00' } });
    expect([trailing.status, trailing.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    const paired = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'group \ud83d\ude00' } });
    expect(paired.status).toBe(201);
  });
});
