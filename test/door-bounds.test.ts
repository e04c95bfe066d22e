import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPC_MAX_BATCH_SIZE } from '../src/core/trpc-batch.ts';
import { MAX_ALIASES, MAX_PROCEDURE_CALLS } from '../src/graphql/procedure-calls.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call, graphql } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/** How much work one request to /graphql or /trpc may ask for: it counts once against the per-IP limit. */
describe('work one GraphQL document or tRPC batch may ask for', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join('\n');
  const userTotal = async () => (await call(app, 'GET', '/api/v1/users?per_page=1', { token: ws.apiKey })).body.meta.total as number;

  it(`refuses a document of more than ${MAX_PROCEDURE_CALLS} root fields with BAD_REQUEST before any procedure runs`, async () => {
    const before = await userTotal();
    const creates = Array.from(
      { length: MAX_PROCEDURE_CALLS + 1 },
      (_, i) => `c${i}: createUser(input: { email: "${uniqueEmail(`bound${i}`)}", password: "password-123" }) { id }`,
    ).join('\n');
    const refused = await graphql(app, `mutation { ${creates} }`, {}, ws.apiKey);
    expect(refused.body.data ?? null).toBeNull();
    expect(refused.body.errors).toHaveLength(1);
    expect(refused.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(refused.body.errors?.[0]?.message).toMatch(/procedure calls/);
    expect(await userTotal()).toBe(before);

    const counts = await graphql(app, `{ ${aliases(MAX_PROCEDURE_CALLS + 1, 'auditEventCounts(groupBy: day) { key }')} }`, {}, ws.apiKey);
    expect(counts.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(counts.body.data ?? null).toBeNull();
  });

  it('counts batched relations once per place they are asked for, and fragments where they are spread', async () => {
    // users + roles + groups + mfa = 4 calls per alias, whatever the page size.
    const report = 'users(perPage: 100) { data { id roles { role { key } } groups { name } mfa { verified } } }';
    const five = await graphql(app, `{ ${aliases(5, report)} }`, {}, ws.apiKey);
    expect(five.body.errors).toBeUndefined();
    expect(five.body.data.a4.data[0].id).toBeDefined();
    const six = await graphql(app, `{ ${aliases(6, report)} }`, {}, ws.apiKey);
    expect(six.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');

    const spread = await graphql(
      app,
      `query { ...A ...B } fragment A on Query { ${aliases(11, 'threatStats { attempts }')} } fragment B on Query { b: roles { data { memberCount } } ...C }
       fragment C on Query { c1: groups { meta { total } } c2: groups { meta { total } } c3: groups { meta { total } } c4: groups { meta { total } } c5: groups { meta { total } } c6: groups { meta { total } } c7: groups { meta { total } } c8: groups { meta { total } } }`,
      {},
      ws.apiKey,
    );
    expect(spread.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(spread.body.errors?.[0]?.message).toContain('21 procedure calls');
  });

  it('counts a chain of fragments that spread each other twice without expanding it', async () => {
    const links = Array.from({ length: 60 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`).join('\n');
    const started = Date.now();
    const res = await graphql(
      app,
      `
        {
          ...F0
        }
        ${links}
        fragment F60 on Query {
          threatStats {
            attempts
          }
        }
      `,
      {},
      ws.apiKey,
    );
    expect(res.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it(`answers a document of exactly ${MAX_PROCEDURE_CALLS} calls, and the README's report`, async () => {
    const counts = await graphql(
      app,
      `{ ${aliases(MAX_PROCEDURE_CALLS, 'auditEventCounts(groupBy: outcome) { key count }')} }`,
      {},
      ws.apiKey,
    );
    expect(counts.body.errors).toBeUndefined();
    expect(Object.keys(counts.body.data)).toHaveLength(MAX_PROCEDURE_CALLS);

    const report = await graphql(
      app,
      `
        {
          users(status: active, perPage: 20) {
            data {
              email
              status
              roles {
                role {
                  key
                }
                expiresAt
              }
              groups {
                name
              }
              mfa {
                verified
                kinds
              }
            }
            meta {
              total
            }
          }
          roles {
            data {
              key
              name
              memberCount
            }
          }
          __typename
        }
      `,
      {},
      ws.apiKey,
    );
    expect(report.body.errors).toBeUndefined();
    expect(report.body.data.users.meta.total).toBeGreaterThan(0);
  });

  it(`refuses more than ${MAX_ALIASES} aliases below the root, counted where their fragment is spread`, async () => {
    // 200 copies of a user's metadata (up to 16 KiB each) in every row of four pages of 100 users.
    const copies = await graphql(
      app,
      `{ ${aliases(4, 'users(perPage: 100) { data { ...M } }')} } fragment M on User { ${aliases(200, 'metadata')} }`,
      {},
      ws.apiKey,
    );
    expect(copies.body.data ?? null).toBeNull();
    expect(copies.body.errors).toHaveLength(1);
    expect(copies.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(copies.body.errors?.[0]?.message).toContain('800 aliases');

    // Eleven aliases in a fragment spread under two root fields are 22.
    const spread = await graphql(
      app,
      `{ a: users { data { ...E } } b: users { data { ...E } } } fragment E on User { ${aliases(11, 'email')} }`,
      {},
      ws.apiKey,
    );
    expect(spread.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');
    expect(spread.body.errors?.[0]?.message).toContain('22 aliases');

    const introspection = await graphql(app, `{ ${aliases(MAX_ALIASES + 1, '__schema { queryType { name } }')} }`, {}, ws.apiKey);
    expect(introspection.body.errors?.[0]?.extensions.code).toBe('BAD_REQUEST');

    const allowed = await graphql(
      app,
      `{ ${aliases(MAX_PROCEDURE_CALLS - 1, 'users(perPage: 1) { meta { total } }')} users(perPage: 1) { data { ${aliases(MAX_ALIASES, 'email')} } } }`,
      {},
      ws.apiKey,
    );
    expect(allowed.body.errors).toBeUndefined();
    expect(allowed.body.data.users.data[0].a19).toEqual(expect.stringContaining('@'));
  });

  it(`refuses a tRPC batch of more than ${TRPC_MAX_BATCH_SIZE} calls with 400 BAD_REQUEST in tRPC's error shape`, async () => {
    const batch = (n: number) => `/trpc/${Array.from({ length: n }, () => 'users.list').join(',')}?batch=1`;
    const refused = await call(app, 'GET', batch(TRPC_MAX_BATCH_SIZE + 1), { token: ws.apiKey });
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toContain('application/json');
    expect(refused.body.error.data).toMatchObject({ appCode: 'BAD_REQUEST', httpStatus: 400 });

    const before = await userTotal();
    const creates = Array.from({ length: TRPC_MAX_BATCH_SIZE + 1 }, (_, i) => [
      String(i),
      { email: uniqueEmail(`batch${i}`), password: 'password-123' },
    ]);
    const writes = await call(app, 'POST', `/trpc/${creates.map(() => 'users.create').join(',')}?batch=1`, {
      token: ws.apiKey,
      body: Object.fromEntries(creates),
    });
    expect(writes.status).toBe(400);
    expect(await userTotal()).toBe(before);

    const allowed = await call(app, 'GET', batch(TRPC_MAX_BATCH_SIZE), { token: ws.apiKey });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toHaveLength(TRPC_MAX_BATCH_SIZE);
  });
});
