import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/*
 * A page of the users list without `q` in the second half of its list is read from the far end (the
 * oldest first, then put back newest first), with the offset from that end computed from the total.
 * Every page of every filter, at several page sizes, must still be exactly the slice of the list
 * read straight from the table: the pages near the end (the far-end walk, a last partial page) as
 * much as the first ones, and the pages past the end empty with the right total.
 */
describe('users list: every page is its slice of the list, from whichever end it is read', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const PASSWORD = 'a perfectly fine password';

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Pages from both ends');
    // The owner and 44 users: 45.
    const made: { id: string; email: string }[] = [];
    for (let batch = 0; batch < 4; batch++) {
      const created = await Promise.all(
        Array.from({ length: 11 }, (_, i) =>
          call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail(`page${batch}-${i}`), password: PASSWORD } }),
        ),
      );
      for (const res of created) {
        expect(res.status).toBe(201);
        made.push(res.body.data);
      }
    }
    const patch = async (index: number, status: string) => {
      const res = await call(app, 'PATCH', `/api/v1/users/${made[index]?.id}`, { token: ws.apiKey, body: { status } });
      expect(res.status).toBe(200);
    };
    // Spread over the list, so each filter's rows fall on pages read from either end.
    for (const index of [2, 17, 30, 41]) await patch(index, 'deactivated');
    for (const index of [5, 23, 38]) await patch(index, 'locked');
    const lockOut = async (index: number) => {
      const user = made[index] as { email: string };
      for (let i = 0; i < 10; i++) expect((await login(app, ws.id, user.email, `wrong ${i} password`)).status).toBe(401);
    };
    // A lockout that has lapsed (stored `locked`, shown `active`) and one still running.
    await lockOut(11);
    app.clock.advance(15 * 60 * 1000 + 1000);
    await lockOut(34);
  });
  afterAll(() => app.close());

  /** The list straight from the table, newest first, with the status each user shows now. */
  async function reference(): Promise<{ id: string; status: string }[]> {
    const rows = await app.deps.orm.em
      .getConnection()
      .execute<{ id: string; status: string; locked_until: string | Date | null }[]>(
        'select id, status, locked_until from users where workspace_id = ? order by id desc',
        [ws.id],
      );
    const now = app.clock.now().getTime();
    return rows.map((row) => ({
      id: row.id,
      status: row.status === 'locked' && row.locked_until !== null && new Date(row.locked_until).getTime() <= now ? 'active' : row.status,
    }));
  }

  async function page(filter: string, perPage: number, number: number) {
    const res = await call(app, 'GET', `/api/v1/users?per_page=${perPage}&page=${number}${filter ? `&status=${filter}` : ''}`, {
      token: ws.apiKey,
    });
    expect(res.status).toBe(200);
    return { rows: res.body.data.map((u: { id: string; status: string }) => ({ id: u.id, status: u.status })), meta: res.body.meta };
  }

  it('holds the workspace this test means: 45 users, 4 deactivated, 4 locked, a lapsed lock among the active', async () => {
    const list = await reference();
    const count = (status: string) => list.filter((u) => u.status === status).length;
    expect([list.length, count('active'), count('locked'), count('deactivated')]).toEqual([45, 37, 4, 4]);
  });

  for (const filter of ['', 'active', 'locked', 'deactivated']) {
    it(`answers every page of ${filter || 'the whole list'} at 7, 1 and 100 a page, and the pages after the end`, async () => {
      const list = (await reference()).filter((u) => !filter || u.status === filter);
      for (const perPage of [7, 1, 100]) {
        const last = Math.ceil(list.length / perPage);
        for (const number of [...Array.from({ length: last + 1 }, (_, i) => i + 1), last + 50]) {
          const expected = list.slice((number - 1) * perPage, number * perPage);
          expect({ ...(await page(filter, perPage, number)), at: [perPage, number] }).toEqual({
            rows: expected,
            meta: { total: list.length, page: number, per_page: perPage },
            at: [perPage, number],
          });
        }
      }
    });
  }
});
