import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, someIp } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { linkTokenIn, MailSink } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/*
 * The users list's `meta.total` without `q` is read from `user_counts`, which triggers on `users`
 * keep (Migration20261203010000_user_counts). Every path that adds, removes or changes the status of
 * a user must leave it exact: each step below checks the totals the API answers against the numbers
 * the steps imply and against a count of the rows themselves.
 */
describe('users list: meta.total stays exact', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();
  const PASSWORD = 'a perfectly fine password';

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), BASE_URL: 'https://id.example.test' });
    ws = await createWorkspace(app, 'Totals');
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  const create = async (label: string) => {
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail(label), password: PASSWORD } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; email: string };
  };
  const setStatus = async (id: string, status: string) => {
    const res = await call(app, 'PATCH', `/api/v1/users/${id}`, { token: ws.apiKey, body: { status } });
    expect(res.status).toBe(200);
  };

  /** The totals the API answers: unfiltered and per status, each with a page read of its own. */
  async function totals(workspace = ws) {
    const read = async (filter: string) => {
      const res = await call(app, 'GET', `/api/v1/users?per_page=1${filter}`, { token: workspace.apiKey });
      expect(res.status).toBe(200);
      return res.body.meta.total as number;
    };
    return {
      all: await read(''),
      active: await read('&status=active'),
      locked: await read('&status=locked'),
      deactivated: await read('&status=deactivated'),
    };
  }

  /** The same totals counted from the rows, as the API shows them at the app's time. */
  async function counted(workspaceId = ws.id) {
    const [row] = await app.deps.orm.em.getConnection().execute<{ all: number; active: number; locked: number; deactivated: number }[]>(
      `select count(*)::int as all,
              count(*) filter (where shown = 'active')::int as active,
              count(*) filter (where shown = 'locked')::int as locked,
              count(*) filter (where shown = 'deactivated')::int as deactivated
         from (select case when status = 'locked' and locked_until <= ? then 'active' else status end as shown
                 from users where workspace_id = ?) u`,
      [app.clock.now(), workspaceId],
    );
    return row;
  }

  async function expectTotals(expected: { all: number; active: number; locked: number; deactivated: number }, workspace = ws) {
    expect(await totals(workspace)).toEqual(expected);
    expect(await counted(workspace.id)).toEqual(expected);
  }

  it('counts creates, status changes, a lapsed lock, invitation acceptances and deletes', async () => {
    await expectTotals({ all: 1, active: 1, locked: 0, deactivated: 0 });
    const [a, b, c, d] = [await create('a'), await create('b'), await create('c'), await create('d')];
    await expectTotals({ all: 5, active: 5, locked: 0, deactivated: 0 });

    await setStatus(a.id, 'deactivated');
    await setStatus(b.id, 'locked');
    await expectTotals({ all: 5, active: 3, locked: 1, deactivated: 1 });
    // A PATCH to the status a user already has changes nothing.
    await setStatus(b.id, 'locked');
    await expectTotals({ all: 5, active: 3, locked: 1, deactivated: 1 });

    // Ten wrong passwords lock for fifteen minutes; once those have passed the user reads as active
    // (the row still says `locked` until the next attempt), and the totals move with the clock.
    for (let i = 0; i < 10; i++) expect((await login(app, ws.id, c.email, `wrong ${i} password`)).status).toBe(401);
    await expectTotals({ all: 5, active: 2, locked: 2, deactivated: 1 });
    app.clock.advance(15 * 60 * 1000 + 1000);
    await expectTotals({ all: 5, active: 3, locked: 1, deactivated: 1 });
    // The next sign-in writes the lapsed lock back as active: the same totals.
    expect((await login(app, ws.id, c.email, PASSWORD)).status).toBe(200);
    await expectTotals({ all: 5, active: 3, locked: 1, deactivated: 1 });

    const invited = uniqueEmail('invitee');
    expect((await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email: invited } })).status).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(invited), 'accept-invitation');
    const accepted = await call(app, 'POST', '/api/v1/invitations/accept', {
      body: { token, password: PASSWORD },
      headers: { 'x-forwarded-for': someIp() },
    });
    expect(accepted.status).toBe(200);
    await expectTotals({ all: 6, active: 4, locked: 1, deactivated: 1 });

    for (const user of [a, b, d]) expect((await call(app, 'DELETE', `/api/v1/users/${user.id}`, { token: ws.apiKey })).status).toBe(200);
    await expectTotals({ all: 3, active: 3, locked: 0, deactivated: 0 });
    await setStatus(c.id, 'active');
    await expectTotals({ all: 3, active: 3, locked: 0, deactivated: 0 });
  });

  it('counts concurrent creates in one workspace, and refused duplicates not at all', async () => {
    const own = await createWorkspace(app, 'Concurrent');
    const duplicate = uniqueEmail('twice');
    const bodies = [
      ...Array.from({ length: 12 }, (_, i) => ({ email: uniqueEmail(`burst${i}`), password: PASSWORD })),
      { email: duplicate, password: PASSWORD },
      { email: duplicate, password: PASSWORD },
    ];
    const results = await Promise.all(bodies.map((body) => call(app, 'POST', '/api/v1/users', { token: own.apiKey, body })));
    expect(results.map((r) => r.status).sort()).toEqual([...Array<number>(13).fill(201), 409]);
    await expectTotals({ all: 14, active: 14, locked: 0, deactivated: 0 }, own);
    // Another workspace's users never reach this one's totals, nor the other way round.
    expect((await totals()).all).toBe((await counted())?.all);
  });

  it('pages by status in the list order, a lapsed lock among the active users, with their exact totals', async () => {
    const own = await createWorkspace(app, 'Pages');
    const made: { id: string; email: string }[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await call(app, 'POST', '/api/v1/users', {
        token: own.apiKey,
        body: { email: uniqueEmail(`p${i}`), password: PASSWORD },
      });
      made.push(res.body.data);
    }
    const [u0, u1, u2, u3] = made as [(typeof made)[0], (typeof made)[0], (typeof made)[0], (typeof made)[0]];
    for (const user of [u1, u3]) {
      expect((await call(app, 'PATCH', `/api/v1/users/${user.id}`, { token: own.apiKey, body: { status: 'deactivated' } })).status).toBe(
        200,
      );
    }
    for (let i = 0; i < 10; i++) await login(app, own.id, u2.email, `wrong ${i} password`);
    expect((await call(app, 'PATCH', `/api/v1/users/${u0.id}`, { token: own.apiKey, body: { status: 'locked' } })).status).toBe(200);

    const ids = async (query: string) => {
      const res = await call(app, 'GET', `/api/v1/users?${query}`, { token: own.apiKey });
      return { ids: res.body.data.map((u: { id: string }) => u.id), meta: res.body.meta };
    };
    // Newest first: the owner was made before every user here.
    const newestFirst = [...made].reverse().map((u) => u.id);
    const activeNow = newestFirst.filter((id) => ![u0.id, u1.id, u2.id, u3.id].includes(id));
    expect(await ids('status=active&per_page=2&page=2')).toEqual({
      ids: activeNow.slice(2, 3).concat(own.owner.id),
      meta: { total: 4, page: 2, per_page: 2 },
    });
    expect(await ids('status=locked')).toEqual({ ids: [u2.id, u0.id], meta: { total: 2, page: 1, per_page: 20 } });
    expect(await ids('status=deactivated&per_page=1&page=2')).toEqual({ ids: [u1.id], meta: { total: 2, page: 2, per_page: 1 } });
    expect(await ids('status=deactivated&page=3')).toEqual({ ids: [], meta: { total: 2, page: 3, per_page: 20 } });
    expect(await ids('per_page=3&page=3')).toEqual({ ids: [u0.id, own.owner.id], meta: { total: 8, page: 3, per_page: 3 } });

    app.clock.advance(15 * 60 * 1000 + 1000);
    const activeLater = newestFirst.filter((id) => ![u0.id, u1.id, u3.id].includes(id)).concat(own.owner.id);
    expect(await ids('status=active&per_page=100')).toEqual({ ids: activeLater, meta: { total: 5, page: 1, per_page: 100 } });
    expect(await ids('status=locked')).toEqual({ ids: [u0.id], meta: { total: 1, page: 1, per_page: 20 } });
  });

  it('counts rows written, changed and deleted in bulk, and a workspace’s deletion, whatever wrote them', async () => {
    const own = await createWorkspace(app, 'Bulk');
    const conn = app.deps.orm.em.getConnection();
    await conn.execute(
      `insert into users (id, workspace_id, email, name, status, created_at, updated_at, locked_until)
       select 'usr_bulk' || lpad(g::text, 22, '0'), ?, 'bulk' || g || '@example.com', null,
              case when g % 5 = 0 then 'deactivated' when g % 7 = 0 then 'locked' else 'active' end, now(), now(),
              case when g % 7 = 0 and g % 2 = 0 then ?::timestamptz end
         from generate_series(1, 300) g`,
      [own.id, new Date(app.clock.now().getTime() - 1000)],
    );
    // 60 deactivated; 34 multiples of 7 not of 5, of which 17 are odd (admin locks, no end) and 17 even (lapsed).
    await expectTotals({ all: 301, active: 224, locked: 17, deactivated: 60 }, own);
    await conn.execute(`update users set status = 'active', locked_until = null where workspace_id = ? and status = 'locked'`, [own.id]);
    await expectTotals({ all: 301, active: 241, locked: 0, deactivated: 60 }, own);
    await conn.execute(`delete from users where workspace_id = ? and status = 'deactivated'`, [own.id]);
    await expectTotals({ all: 241, active: 241, locked: 0, deactivated: 0 }, own);

    // A workspace's deletion cascades to its users (a bare one here: audit rows are append-only, so a
    // workspace that has any cannot be deleted).
    const gone = 'wsp_totals_deleted_workspace000';
    await conn.execute('insert into workspaces (id, name, created_at) values (?, ?, now())', [gone, 'Deleted']);
    await conn.execute(
      `insert into users (id, workspace_id, email, status, created_at, updated_at)
       select 'usr_gone' || lpad(g::text, 22, '0'), ?, 'gone' || g || '@example.com', 'active', now(), now()
         from generate_series(1, 50) g`,
      [gone],
    );
    expect(await conn.execute('select status, sum(n)::int as n from user_counts where workspace_id = ? group by status', [gone])).toEqual([
      { status: 'active', n: 50 },
    ]);
    await conn.execute('delete from workspaces where id = ?', [gone]);
    expect(await conn.execute('select * from user_counts where workspace_id = ?', [gone])).toEqual([]);
    // Every workspace's counts still match its rows.
    const drift = await conn.execute(
      `select workspace_id, status, coalesce(c.n, 0) as counted, coalesce(u.n, 0) as rows
         from (select workspace_id, status, sum(n)::int as n from user_counts group by 1, 2) c
         full join (select workspace_id, status, count(*)::int as n from users group by 1, 2) u using (workspace_id, status)
        where coalesce(c.n, 0) <> coalesce(u.n, 0)`,
    );
    expect(drift).toEqual([]);
  });
});
