import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRouter } from '../src/router.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call, graphql } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/** README: GraphQL errors carry the REST codes in errors[].extensions.code, tRPC errors in error.data.appCode. */
describe('each door answers its errors in its own shape, with the REST codes', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('lets other origins call /graphql with a bearer credential, never with the browser’s (no Allow-Credentials)', async () => {
    const origin = { origin: 'https://elsewhere.example' };
    const preflight = await call(app, 'OPTIONS', '/graphql', {
      headers: { ...origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://elsewhere.example');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
    const query = await call(app, 'POST', '/graphql', {
      token: ws.apiKey,
      headers: origin,
      body: { query: '{ users { meta { total } } }' },
    });
    expect(query.status).toBe(200);
    expect(query.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('answers GraphQL documents that cannot run BAD_REQUEST, keeping the message', async () => {
    const syntax = await graphql(app, '{ users {', {}, ws.apiKey);
    expect(syntax.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(syntax.body.errors?.[0]?.message).toContain('Syntax Error');

    const invalid = await graphql(app, '{ userz { id } }', {}, ws.apiKey);
    expect(invalid.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(invalid.body.errors?.[0]?.message).toContain('Cannot query field "userz"');

    const unknownOperation = await call(app, 'POST', '/graphql', {
      token: ws.apiKey,
      body: { query: 'query A { users { meta { total } } }', operationName: 'B' },
    });
    expect(unknownOperation.status).toBe(400);
    expect(unknownOperation.body.errors[0].extensions.code).toBe('BAD_REQUEST');
    expect(unknownOperation.body.errors[0].message).toContain('Could not determine what operation to execute');

    const subscription = await graphql(app, 'subscription { users { meta { total } } }', {}, ws.apiKey);
    expect(subscription.body.data ?? null).toBeNull();
    expect(subscription.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');

    const notAString = await call(app, 'POST', '/graphql', { token: ws.apiKey, body: { query: 1 } });
    expect(notAString.status).toBe(400);
    expect(notAString.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('answers a /graphql POST whose body is not JSON 400 BAD_REQUEST in GraphQL error shape, and runs nothing', async () => {
    const total = async () => (await call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey })).body.meta.total as number;
    const before = await total();
    const mutation = `mutation { createUser(input: { email: "${uniqueEmail('form')}", password: "password-123" }) { id } }`;
    const bodies: [string, string][] = [
      ['text/plain', JSON.stringify({ query: mutation })],
      ['application/x-www-form-urlencoded', new URLSearchParams({ query: mutation }).toString()],
      [
        'multipart/form-data; boundary=x',
        `--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n${JSON.stringify({ query: mutation })}\r\n--x--\r\n`,
      ],
    ];
    for (const [type, raw] of bodies) {
      const res = await call(app, 'POST', '/graphql', { token: ws.apiKey, raw, headers: { 'content-type': type } });
      expect(res.status, type).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.body, type).toEqual({ errors: [{ message: 'Send the body as application/json', extensions: { code: 'BAD_REQUEST' } }] });
    }
    expect(await total()).toBe(before);

    const json = await call(app, 'POST', '/graphql', {
      token: ws.apiKey,
      raw: JSON.stringify({ query: '{ users { meta { total } } }' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(json.body.data.users.meta.total).toBe(before);
  });

  it('answers a JSON body nested past 64 levels 400 BAD_REQUEST on REST and tRPC, and stores nothing', async () => {
    const total = async () => (await call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey })).body.meta.total as number;
    const before = await total();
    const nested = (depth: number, leaf: string) => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
    const user = (depth: number, leaf = '1') =>
      `{"email":"${uniqueEmail('deep')}","password":"password-123","metadata":{"a":${nested(depth, leaf)}}}`;
    const message = 'The request body is nested more than 64 levels deep';

    // Past the text check's reach, NUL reached PostgreSQL (500); thousands of levels overflowed the stack.
    for (const raw of [user(70, '"x\\u0000y"'), user(10_000)]) {
      const rest = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw });
      expect(rest.status).toBe(400);
      expect(rest.body.error).toEqual({ code: 'BAD_REQUEST', message });
      const single = await call(app, 'POST', '/trpc/users.create', { token: ws.apiKey, raw });
      expect(single.status).toBe(400);
      expect(single.body.error.data).toEqual({ appCode: 'BAD_REQUEST', httpStatus: 400 });
      expect(single.body.error.message).toBe(message);
      const batch = await call(app, 'POST', '/trpc/users.create?batch=1', { token: ws.apiKey, raw: `{"0":${raw}}` });
      expect(batch.status).toBe(400);
      expect(batch.body.error.data.appCode).toBe('BAD_REQUEST');
    }
    expect(await total()).toBe(before);

    const deepest = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, raw: user(62) });
    expect(deepest.status).toBe(201);
  });

  it('answers a tRPC batch whose calls ended differently 207 without any one call’s headers, and one whose calls failed alike with their status', async () => {
    const taken = uniqueEmail('batch-taken');
    const password = 'a passphrase nobody guesses';
    expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: taken, password } })).status).toBe(201);
    const fresh = uniqueEmail('batch-fresh');
    const mixed = await call(app, 'POST', '/trpc/users.create,users.create?batch=1', {
      token: ws.apiKey,
      body: { 0: { email: fresh, password }, 1: { email: taken, password } },
    });
    expect(mixed.status).toBe(207);
    expect(mixed.body[0].result.data.email).toBe(fresh);
    expect(mixed.body[1].error.data).toMatchObject({ appCode: 'CONFLICT', httpStatus: 409 });
    expect(mixed.headers.get('content-type')).toContain('application/json');

    const conflicts = await call(app, 'POST', '/trpc/users.create,users.create?batch=1', {
      token: ws.apiKey,
      body: { 0: { email: taken, password }, 1: { email: fresh, password } },
    });
    expect(conflicts.status).toBe(409);
    expect(conflicts.body.map((one: { error: { data: { appCode: string } } }) => one.error.data.appCode)).toEqual(['CONFLICT', 'CONFLICT']);

    const unauthenticated = await call(app, 'POST', '/trpc/users.create,users.create?batch=1', {
      token: 'sk_test_not_a_key',
      body: { 0: { email: uniqueEmail('batch-a'), password }, 1: { email: uniqueEmail('batch-b'), password } },
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toContain('Bearer');
  });

  it('answers a tRPC body over 1 MiB 413 and one that is not JSON 400, in tRPC error shape', async () => {
    const large = await call(app, 'POST', '/trpc/users.create', {
      token: ws.apiKey,
      raw: JSON.stringify({ email: 'a'.repeat(1_100_000) }),
    });
    expect(large.status).toBe(413);
    expect(large.body.error.data).toEqual({ appCode: 'BAD_REQUEST', httpStatus: 413 });
    expect(large.body.error.message).toBe('The request body is larger than 1 MiB');
    expect(large.body.error.code).toBe(-32600);

    const malformed = await call(app, 'POST', '/trpc/users.create', { token: ws.apiKey, raw: '{' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.data).toEqual({ appCode: 'BAD_REQUEST', httpStatus: 400 });
  });

  it('answers the per-IP limit 429 RATE_LIMITED in GraphQL and tRPC error shapes, with the same headers', async () => {
    const ip = { 'x-forwarded-for': '203.0.113.61' };
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(Array.from({ length: 100 }, () => call(app, 'GET', '/api/v1/nope', { headers: ip })));
    }
    const expectLimitHeaders = (headers: Headers) => {
      expect(Number(headers.get('retry-after'))).toBeGreaterThan(0);
      expect(headers.get('ratelimit-limit')).toBe('1000');
      expect(headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      expect(headers.get('x-request-id')).toBeTruthy();
    };

    const g = await call(app, 'POST', '/graphql', { token: ws.apiKey, headers: ip, body: { query: '{ users { meta { total } } }' } });
    expect(g.status).toBe(429);
    expect(g.body).toEqual({ errors: [{ message: 'Too many requests; try again later', extensions: { code: 'RATE_LIMITED' } }] });
    expectLimitHeaders(g.headers);

    const t = await call(app, 'GET', '/trpc/users.list', { token: ws.apiKey, headers: ip });
    expect(t.status).toBe(429);
    expect(t.body).toEqual({
      error: { message: 'Too many requests; try again later', code: -32029, data: { appCode: 'RATE_LIMITED', httpStatus: 429 } },
    });
    expectLimitHeaders(t.headers);

    // tRPC's own client reads it as any tRPC error, for every call of a batch.
    const client = createTRPCClient<AppRouter>({
      links: [httpBatchLink({ url: `${app.url}/trpc`, headers: { ...ip, authorization: `Bearer ${ws.apiKey}` } })],
    });
    const refused = await Promise.allSettled([client.users.list.query({}), client.roles.list.query({})]);
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(TRPCClientError);
      expect((reason as TRPCClientError<AppRouter>).data?.appCode).toBe('RATE_LIMITED');
    }

    const rest = await call(app, 'GET', '/api/v1/users', { token: ws.apiKey, headers: ip });
    expect(rest.body.error.code).toBe('RATE_LIMITED');
  });
});

describe('introspection and field suggestions in production', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ NODE_ENV: 'production' });
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const SCHEMA = '{ __schema { queryType { name } } }';
  const HIDDEN = 'query { ...F } fragment F on Query { described: __type(name: "User") { fields { name } } }';

  it('refuses __schema and __type without a valid credential, also through a fragment and an alias', async () => {
    for (const token of [undefined, 'sk_not_a_real_key_000000000']) {
      for (const query of [SCHEMA, HIDDEN]) {
        const res = await graphql(app, query, {}, token);
        expect(res.body.data ?? null).toBeNull();
        expect(res.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
        expect(res.body.errors?.[0]?.message).toMatch(/introspection/i);
      }
    }
    expect((await graphql(app, '{ __typename }')).body.data).toEqual({ __typename: 'Query' });
  });

  it('describes the schema to a caller with a valid credential', async () => {
    const schema = await graphql(app, SCHEMA, {}, ws.apiKey);
    expect(schema.body.errors).toBeUndefined();
    expect(schema.body.data.__schema.queryType.name).toBe('Query');
    const hidden = await graphql(app, HIDDEN, {}, ws.apiKey);
    expect(hidden.body.data.described.fields.map((f: { name: string }) => f.name)).toContain('email');
  });

  it('drops "Did you mean" hints for callers without a valid credential only', async () => {
    const anonymous = await graphql(app, '{ userz { id } }');
    expect(anonymous.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(anonymous.body.errors?.[0]?.message).toBe('Cannot query field "userz" on type "Query".');
    const signedIn = await graphql(app, '{ userz { id } }', {}, ws.apiKey);
    expect(signedIn.body.errors?.[0]?.message).toContain('Did you mean "user" or "users"?');
    const again = await graphql(app, '{ userz { id } }');
    expect(again.body.errors?.[0]?.message).not.toContain('Did you mean');
  });
});

describe('introspection outside production', () => {
  it('describes the schema to anyone, with hints', async () => {
    const app = await startTestApp();
    try {
      const schema = await graphql(app, '{ __schema { queryType { name } } }');
      expect(schema.body.data.__schema.queryType.name).toBe('Query');
      expect((await graphql(app, '{ userz { id } }')).body.errors?.[0]?.message).toContain('Did you mean');
    } finally {
      await app.close();
    }
  });
});
