import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/*
 * The users list's body, byte for byte, against one written from the table by PostgreSQL itself:
 * timestamps formatted by `to_char` in UTC (milliseconds cut, as JavaScript's Date cut them), the
 * fields in the order of the User schema. Its timestamps are set to the forms PostgreSQL writes
 * (no fraction, one to six decimals, a leap day, the last microsecond of a day), so a change in how
 * the service turns them into ISO 8601 shows here.
 */
describe('users list: the body, byte for byte', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const stamps = [
    '2028-02-29 23:59:59.999999+00',
    '2026-11-28 06:30:24+00',
    '2026-01-01 00:00:00.5+00',
    '1999-12-31 23:59:59.01+00',
    '2026-04-30 12:00:00.000001+00',
    '2100-03-01 01:02:03.123456+00',
  ];

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Bodies byte for byte');
    for (const [i, stamp] of stamps.entries()) {
      const created = await call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        body: {
          email: uniqueEmail(`body${i}`),
          password: 'a perfectly fine password',
          ...(i % 2 === 0 ? { name: `Ünïcode "name" ${i}` } : {}),
          metadata: { plan: 'team', n: i, nested: { list: [1, 'two', null] } },
        },
      });
      expect(created.status).toBe(201);
      const id = created.body.data.id as string;
      const later = stamps[(i + 1) % stamps.length];
      await app.deps.orm.em.getConnection().execute(
        `update users set created_at = ?::timestamptz, updated_at = ?::timestamptz,
             last_sign_in_at = case when ? then ?::timestamptz else null end where id = ?`,
        [stamp, later, i % 3 !== 0, stamp, id],
      );
    }
    // An admin's lock (shown locked) and a lapsed lockout (stored locked, shown active).
    const now = app.clock.now().getTime();
    await app.deps.orm.em
      .getConnection()
      .execute(`update users set status = 'locked', locked_until = null where workspace_id = ? and email like 'body1%'`, [ws.id]);
    await app.deps.orm.em
      .getConnection()
      .execute(`update users set status = 'locked', locked_until = ? where workspace_id = ? and email like 'body2%'`, [
        new Date(now - 60_000),
        ws.id,
      ]);
  });
  afterAll(() => app.close());

  /** The page as PostgreSQL writes it: `{data, meta}` with each user's fields in the schema's order. */
  async function expectedBody(perPage: number, page: number): Promise<string> {
    const utc = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    const rows = await app.deps.orm.em.getConnection().execute<
      {
        id: string;
        email: string;
        name: string | null;
        status: string;
        lapsed: boolean;
        created_at: string;
        updated_at: string;
        last_sign_in_at: string | null;
        email_verified: boolean;
        mfa_enabled: boolean;
        metadata: Record<string, unknown>;
      }[]
    >(
      `select id, email, name, status, coalesce(locked_until <= ?, false) as lapsed,
              ${utc('created_at')} as created_at, ${utc('updated_at')} as updated_at, ${utc('last_sign_in_at')} as last_sign_in_at,
              email_verified, exists (select 1 from mfa_factors f where f.user_id = users.id and f.status = 'Verified') as mfa_enabled,
              metadata
         from users where workspace_id = ? order by id desc`,
      [app.clock.now(), ws.id],
    );
    const data = rows.slice((page - 1) * perPage, page * perPage).map((row) => ({
      id: row.id,
      email: row.email,
      name: row.name,
      status: row.status === 'locked' && row.lapsed ? 'active' : row.status,
      created_at: row.created_at,
      updated_at: row.updated_at,
      last_sign_in_at: row.last_sign_in_at,
      email_verified: row.email_verified,
      mfa_enabled: row.mfa_enabled,
      metadata: row.metadata,
    }));
    return JSON.stringify({ data, meta: { total: rows.length, page, per_page: perPage } });
  }

  it('is the table written out, on every page', async () => {
    for (const [perPage, page] of [
      [20, 1],
      [3, 1],
      [3, 2],
      [3, 3],
    ] as const) {
      const res = await fetch(`${app.url}/api/v1/users?per_page=${perPage}&page=${page}`, {
        headers: { authorization: `Bearer ${ws.apiKey}` },
      });
      expect(res.status).toBe(200);
      expect({ at: [perPage, page], body: await res.text() }).toEqual({ at: [perPage, page], body: await expectedBody(perPage, page) });
    }
  });

  it('holds the forms this test means: every stamp, both locks, names and no names', async () => {
    const body = await expectedBody(20, 1);
    const parsed = JSON.parse(body) as { data: { status: string; created_at: string; name: string | null }[] };
    expect(parsed.data.length).toBe(stamps.length + 1);
    expect(parsed.data.map((u) => u.status).sort()).toEqual([...Array(stamps.length).fill('active'), 'locked'].sort());
    expect(parsed.data.map((u) => u.created_at)).toEqual(
      expect.arrayContaining([
        '2028-02-29T23:59:59.999Z',
        '2026-11-28T06:30:24.000Z',
        '2026-01-01T00:00:00.500Z',
        '1999-12-31T23:59:59.010Z',
      ]),
    );
    expect(parsed.data.some((u) => u.name === null)).toBe(true);
  });
});
