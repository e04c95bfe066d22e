import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { procedureMeta } from '../../router.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/**
 * A unique value stored in the vault must come back from the reveal endpoint and from nowhere else:
 * not from any read endpoint of the API (the list comes from the router, so new endpoints join), not
 * from GraphQL, not from the audit log, not from the events outbox that webhooks will deliver, and
 * not from any table of the database in clear.
 */
describe('a vault sentinel', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let ownerToken: string;
  const sentinel = `SENTINEL-${randomUUID()}`;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    const stored = await call(app, 'POST', '/api/v1/vault/objects/', { token: ownerToken, body: { name: 'sentinel', value: sentinel } });
    expect(stored.status).toBe(201);
    expect(JSON.stringify(stored.body)).not.toContain(sentinel);
    ids['vault/objects'] = stored.body.data.id;
    ids.users = ws.owner.id;
  });
  afterAll(() => app.close());

  it('is in the reveal response', async () => {
    const res = await call(app, 'GET', `/api/v1/vault/objects/${ids['vault/objects']}/reveal`, { token: ws.apiKey });
    expect(res.body.data.value).toBe(sentinel);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?per_page=1', { token: ws.apiKey });
    ids['audit/events'] = audit.body.data[0].id;
  });

  const reads = [...procedureMeta.values()]
    .map((meta) => meta.openapi)
    .filter((o): o is NonNullable<typeof o> => !!o && o.method === 'GET' && o.path.startsWith('/api/v1/') && !o.path.endsWith('/reveal'));

  it.each(reads.map((o) => o.path))('is not in GET %s', async (path) => {
    const collection = /^\/api\/v1\/([a-z/-]+?)\/\{/.exec(path)?.[1];
    const url = path.replace(/\{(\w+)\}/g, () => (collection ? ids[collection] : undefined) ?? 'zzz_00000000000000000000000000');
    for (const token of [ws.apiKey, ownerToken]) {
      const res = await call(app, 'GET', `${url}${url.includes('?') ? '&' : '?'}per_page=100`, { token });
      expect(res.status, `${url} → ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
      expect(JSON.stringify(res.body), url).not.toContain(sentinel);
    }
  });

  it('is not in GraphQL reports', async () => {
    const res = await graphql(
      app,
      `
        {
          auditEvents(perPage: 100) {
            data {
              id
              eventType
              details
              target {
                id
              }
            }
          }
          byType: auditEventCounts(groupBy: event_type) {
            key
            count
          }
          users {
            data {
              id
              email
            }
          }
          threatStats {
            attempts
          }
        }
      `,
      {},
      ws.apiKey,
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.auditEvents.data.map((e: { eventType: string }) => e.eventType)).toEqual(
      expect.arrayContaining(['vault.create', 'vault.reveal']),
    );
    expect(JSON.stringify(res.body)).not.toContain(sentinel);
  });

  it('is not in the audit log, the events outbox, the mail outbox, nor in clear in any table', async () => {
    const conn = app.deps.orm.em.getConnection();
    const tables = await conn.execute<{ table_name: string }[]>(
      `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    const names = tables.map((t) => t.table_name);
    expect(names).toEqual(expect.arrayContaining(['audit_events', 'events', 'email_outbox', 'vault_objects']));
    // The scan does find what is stored in clear: the owner's email, in users.
    const [control] = await conn.execute<{ n: number }[]>(`select count(*)::int as n from users t where t::text like ?`, [
      `%${ws.owner.email}%`,
    ]);
    expect(control?.n).toBe(1);
    for (const table of names) {
      const [row] = await conn.execute<{ n: number }[]>(`select count(*)::int as n from "${table}" t where t::text like ?`, [
        `%${sentinel}%`,
      ]);
      expect(row?.n, table).toBe(0);
    }
  });
});
