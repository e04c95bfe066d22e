import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from '../src/db/orm-config.ts';
import { testDatabaseUrl } from './helpers/database.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, signIn, someIp } from './helpers/auth.ts';
import { call, graphql, trpc, type ApiResponse } from './helpers/http.ts';
import { linkTokenIn, MailSink } from './helpers/mail-sink.ts';
import { metricValue, scrapeMetrics } from './helpers/metrics.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';
import { authenticatorOf, codeAt } from './helpers/authenticator.ts';
import { sha256 } from '../src/core/secrets.ts';

/**
 * A mutation PostgreSQL aborts for a serialization failure (40001) or a deadlock (40P01) is run again,
 * twice at most (core/trpc.ts `retryingAborted`). The aborts here are real: a constraint trigger the
 * test installs in its database, deferred to COMMIT, raises 40001 at the commit of the first `times`
 * inserts of a marked row: an invitation or a user of a marked email, a session of a marked user. It
 * counts with a sequence of its own, which a rollback does not undo.
 */
/** The tables whose inserts the test may abort, and the column that marks the row. */
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

const MARKED = [
  ['invitations', 'email'],
  ['users', 'email'],
  ['sessions', 'user_id'],
] as const;

describe('a mutation PostgreSQL keeps aborting', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let sequences = 0;
  const mail = new MailSink();
  /** The mailer kicks the handlers asked for (`ctx.afterCommit`), in order. */
  const kicks: string[] = [];

  const sql = (text: string, params: unknown[] = []) => app.deps.orm.em.getConnection().execute(text, params);
  /** The single number a query answers as `n`. */
  const count = async (text: string, params: unknown[] = []) => Number(((await sql(text, params)) as { n: number }[])[0]?.n);

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), METRICS_TOKEN });
    ws = await createWorkspace(app);
    await sql(`create table test_aborted_commits (marker text primary key, times int not null, seq text not null)`);
    await sql(`create function test_abort_commit() returns trigger language plpgsql as $$
      declare rule record;
      begin
        select times, seq into rule from test_aborted_commits where marker = to_jsonb(new) ->> tg_argv[0];
        if found and nextval(rule.seq::regclass) <= rule.times then
          raise exception 'could not serialize access due to read/write dependencies among transactions (test abort of %)',
            to_jsonb(new) ->> tg_argv[0] using errcode = '40001';
        end if;
        return null;
      end $$`);
    for (const [table, column] of MARKED) {
      await sql(`create constraint trigger test_abort_commit after insert on ${table}
        deferrable initially deferred for each row execute function test_abort_commit('${column}')`);
    }
    const kick = app.deps.mailer.kick.bind(app.deps.mailer);
    app.deps.mailer.kick = () => {
      kicks.push('mailer');
      kick();
    };
  });
  afterAll(async () => {
    for (const [table] of MARKED) await sql(`drop trigger test_abort_commit on ${table}`);
    await sql('drop function test_abort_commit()');
    await sql('drop table test_aborted_commits');
    await app.close();
    await mail.stop();
  });

  /** The commits of the first `times` inserts of a row marked `marker` are aborted with 40001. */
  const abortCommits = async (marker: string, times: number) => {
    sequences += 1;
    const seq = `test_abort_seq_${sequences}`;
    await sql(`create sequence ${seq}`);
    await sql('insert into test_aborted_commits (marker, times, seq) values (?, ?, ?)', [marker, times, seq]);
    /** How many commits of a row marked `marker` were tried. */
    return () => count(`select case when is_called then last_value else 0 end as n from ${seq}`);
  };

  /** The rows of the workspace's tables a mutation writes, counted: what an aborted run could leave behind. */
  const written = async () => {
    const [row] = await sql(
      `select (select count(*)::int from invitations where workspace_id = ?) as invitations,
              (select count(*)::int from users where workspace_id = ?) as users,
              (select count(*)::int from email_outbox) as emails,
              (select count(*)::int from events where workspace_id = ?) as events,
              (select count(*)::int from audit_events where workspace_id = ?) as audit`,
      [ws.id, ws.id, ws.id, ws.id],
    );
    return row as { invitations: number; users: number; emails: number; events: number; audit: number };
  };

  const roleId = async (key: string) => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    return roles.body.data.find((r: { key: string }) => r.key === key).id as string;
  };

  it('answers REST 503 UNAVAILABLE with Retry-After once its third run is aborted, leaving nothing written and kicking no mailer', async () => {
    const email = uniqueEmail('aborted-thrice');
    const runs = await abortCommits(email, 3);
    const before = await written();
    kicks.length = 0;
    const res: ApiResponse<any> = await call(app, 'POST', '/api/v1/invitations', {
      token: ws.apiKey,
      body: { email, role_id: await roleId('viewer') },
    });
    expect(await runs()).toBe(3);
    expect([res.status, res.body.error?.code]).toEqual([503, 'UNAVAILABLE']);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(JSON.stringify(res.body)).not.toMatch(/serialize|test abort|40001|insert into/);
    expect(res.body.meta.request_id).toBeTruthy();
    expect(await written()).toEqual(before);
    expect(kicks).toEqual([]);
  });

  it('answers tRPC and GraphQL the same once the third run is aborted (UNAVAILABLE, 503), the user not created', async () => {
    const overTrpc = uniqueEmail('aborted-over-trpc');
    const trpcRuns = await abortCommits(overTrpc, 3);
    const before = await written();
    kicks.length = 0;
    const res = await trpc(app, 'mutation', 'invitations.create', { email: overTrpc }, ws.apiKey);
    expect(await trpcRuns()).toBe(3);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error.data).toMatchObject({ appCode: 'UNAVAILABLE', httpStatus: 503 });
    expect(JSON.stringify(res.body)).not.toMatch(/serialize|test abort|40001|COMMIT/);
    expect(await written()).toEqual(before);
    expect(kicks).toEqual([]);

    const overGraphql = uniqueEmail('aborted-over-graphql');
    const graphqlRuns = await abortCommits(overGraphql, 3);
    const answer = await graphql(
      app,
      'mutation ($email: String!) { createUser(input: { email: $email, password: "password-123" }) { id } }',
      { email: overGraphql },
      ws.apiKey,
    );
    expect(await graphqlRuns()).toBe(3);
    expect(answer.body.data?.createUser ?? null).toBeNull();
    expect(answer.body.errors?.map((e) => e.extensions.code)).toEqual(['UNAVAILABLE']);
    expect(JSON.stringify(answer.body)).not.toMatch(/serialize|test abort|40001|COMMIT/);
    expect(await written()).toEqual(before);
  });

  it('completes a mutation whose first two runs are aborted: one invitation, one email, one mailer kick, after the commit', async () => {
    const email = uniqueEmail('aborted-twice');
    const runs = await abortCommits(email, 2);
    const before = await written();
    kicks.length = 0;
    const res = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } });
    expect(await runs()).toBe(3);
    expect([res.status, res.body.data?.email]).toEqual([201, email]);
    const after = await written();
    expect(after).toEqual({
      ...before,
      invitations: before.invitations + 1,
      emails: before.emails + 1,
      events: before.events + 1,
      audit: before.audit + 1,
    });
    expect(kicks).toEqual(['mailer']);
  });

  /**
   * `POST /api/v1/invitations/accept` keeps its own transactions (the sign-in after it runs the
   * post-login actions holding no connection): the acceptance's is run again as the shared wrapper runs
   * a mutation's. The new user's insert is aborted at its commit: twice, and the third run signs the
   * invitee in; three times, and the answer is 503 with nothing written, the link still good.
   */
  it('runs an acceptance again when its transaction is aborted, then signs the invitee in once', async () => {
    const acceptable = async (email: string) => {
      const invited = await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } });
      expect(invited.status).toBe(201);
      // The emailed link's token, known to the test: the stored hash is replaced by one of its own.
      const token = `inv_test_${invited.body.data.id}`;
      await sql('update invitations set token_hash = ? where id = ?', [sha256(token), invited.body.data.id]);
      return token;
    };
    const accept = (token: string) => call(app, 'POST', '/api/v1/invitations/accept', { body: { token, password: 'invited passphrase' } });

    const twice = uniqueEmail('accept-aborted-twice');
    const token = await acceptable(twice);
    const runs = await abortCommits(twice, 2);
    const before = await written();
    const accepted = await accept(token);
    expect(await runs()).toBe(3);
    expect([accepted.status, accepted.body.data?.user?.email]).toEqual([200, twice]);
    // The user and the sign-in: invitation.accept, user.create and auth.login; invitation.accepted,
    // user.created and user.signed_in.
    expect(await written()).toEqual({ ...before, users: before.users + 1, events: before.events + 3, audit: before.audit + 3 });

    const thrice = uniqueEmail('accept-aborted-thrice');
    const other = await acceptable(thrice);
    const aborted = await abortCommits(thrice, 3);
    const beforeAborted = await written();
    const refused = await accept(other);
    expect(await aborted()).toBe(3);
    expect([refused.status, refused.body.error?.code]).toEqual([503, 'UNAVAILABLE']);
    expect(await written()).toEqual(beforeAborted);
    expect((await accept(other)).status).toBe(200);
  });

  /** How many of the test database's connections wait for a lock. */
  const waiting = () =>
    count(
      `select count(distinct l.pid)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where not l.granted and a.datname = current_database()`,
    );
  const until = async (done: () => Promise<boolean>) => {
    while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  /**
   * The calls of one tRPC batch run side by side, each in a transaction of its own. Of three
   * invitations: `failing` is aborted at each of its three commits, `held` waits at its COMMIT for the
   * role row the test holds (its deferred foreign key), `quick` commits at once. While `held` waits,
   * only `quick`'s mailer kick has run; once the test lets it go, its own; never any of `failing`'s.
   */
  (inject('embedded') ? () => undefined : it)(
    'runs, in a tRPC batch, only the afterCommit callbacks of the calls that committed, each once it has committed',
    async () => {
      const [failing, held, quick] = ['batch-aborted', 'batch-held', 'batch-quick'].map((label) => uniqueEmail(label)) as [
        string,
        string,
        string,
      ];
      const failingRuns = await abortCommits(failing, 3);
      const viewer = await roleId('viewer');
      const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 1));
      const lock = orm.em.fork();
      try {
        await lock.begin();
        await lock.execute('select id from roles where id = ? for update', [viewer]);
        kicks.length = 0;
        const inputs = [{ email: failing }, { email: held, role_id: viewer }, { email: quick, role_id: await roleId('admin') }];
        let settled = false;
        const batch = call(app, 'POST', `/trpc/${inputs.map(() => 'invitations.create').join(',')}?batch=1`, {
          token: ws.apiKey,
          body: Object.fromEntries(inputs.map((input, i) => [String(i), input])),
        }).finally(() => (settled = true));
        await until(async () => kicks.length > 0 && (await failingRuns()) === 3 && (await waiting()) >= 1);
        expect(settled).toBe(false);
        expect(kicks).toEqual(['mailer']);
        expect(await count('select count(*)::int as n from invitations where email = ?', [held])).toBe(0);
        await lock.rollback();
        const res = await batch;
        expect(
          res.body.map(
            (one: { error?: { data: { appCode: string } }; result?: { data: { email: string } } }) =>
              one.error?.data.appCode ?? one.result?.data.email,
          ),
        ).toEqual(['UNAVAILABLE', held, quick]);
        expect(kicks).toEqual(['mailer', 'mailer']);
        const [rows] = await sql(
          `select (select count(*)::int from invitations where email in (?, ?, ?)) as invitations,
                  (select count(*)::int from email_outbox where to_address in (?, ?, ?)) as emails`,
          [failing, held, quick, failing, held, quick],
        );
        expect(rows).toEqual({ invitations: 2, emails: 2 });
      } finally {
        if (lock.isInTransaction()) await lock.rollback();
        await orm.close(true);
      }
    },
  );

  /**
   * `POST /api/v1/auth/mfa/verify` counts its attempt (5 per 5 minutes per user) in Redis, inside its
   * transaction; a run again is answered the first run's count (`ctx.once`). The verify's session is
   * aborted at its first commit: the code passes on the second run, and the user has four attempts
   * left, not three.
   */
  it('counts a second-factor attempt once when its transaction is run again', async () => {
    const email = uniqueEmail('mfa-retried');
    const password = 'correct horse battery';
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } });
    expect(created.status).toBe(201);
    const userId = created.body.data.id as string;
    const { accessToken } = await signIn(app, ws.id, email, password);
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const codeOf = (step: number) => codeAt(totp, app.clock, step);
    // Each code of its own 30-second step: a step is spent once.
    const stepped = (step: number) => {
      const now = app.clock.now().getTime();
      app.clock.set(new Date(now - (now % 30_000) + step * 30_000 + 5_000));
    };
    stepped(1);
    const confirmed = await call(app, 'POST', `/api/v1/mfa/factors/${enrolled.body.data.factor.id}/verify`, {
      token: accessToken,
      body: { code: codeOf(0) },
    });
    expect(confirmed.status).toBe(200);
    const verify = (mfaToken: string, code: string) =>
      call(app, 'POST', '/api/v1/auth/mfa/verify', { body: { mfa_token: mfaToken, code } });

    stepped(1);
    const first = (await login(app, ws.id, email, password)).body.data;
    const runs = await abortCommits(userId, 1);
    const passed = await verify(first.mfa_token, codeOf(0));
    expect(await runs()).toBe(2);
    expect([passed.status, passed.body.data?.user?.id]).toEqual([200, userId]);

    const second = (await login(app, ws.id, email, password)).body.data;
    const wrong = String((Number(codeOf(0)) + 500_000) % 1_000_000).padStart(6, '0');
    const refusals = [];
    for (let i = 0; i < 4; i++) refusals.push((await verify(second.mfa_token, wrong)).body.error?.code);
    expect(refusals).toEqual(['INVALID_CODE', 'INVALID_CODE', 'INVALID_CODE', 'INVALID_CODE']);
    const sixth = await verify(second.mfa_token, wrong);
    expect([sixth.status, sixth.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
  });

  /** How many sign-ins `/metrics` has counted a success. */
  const successes = async () => metricValue(await scrapeMetrics(app, METRICS_TOKEN), 'sign_in_attempts_total{outcome="success"}');

  /**
   * An invitation's acceptance signs the invitee in (auth/sign-in.ts `signInVerifiedUser`), and the
   * sign-in's outcome is counted for `/metrics` (`sign_in_attempts_total`, in process memory). A run
   * PostgreSQL aborted signed nobody in: the acceptance whose first commit is aborted counts one
   * success, the one answered 503 after its third counts none.
   */
  it('counts an invitee’s sign-in once for /metrics when the acceptance is run again, and not at all when it is given up', async () => {
    const invited = async (label: string) => {
      const email = uniqueEmail(label);
      expect((await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email } })).status).toBe(201);
      return { email, token: linkTokenIn(await mail.waitFor(email), 'accept-invitation').token };
    };
    const accept = (token: string) =>
      call(app, 'POST', '/api/v1/invitations/accept', {
        body: { token, password: 'invited passphrase' },
        headers: { 'x-forwarded-for': someIp() },
      });
    const retried = await invited('accept-retried');
    const givenUp = await invited('accept-given-up');
    const before = await successes();

    const runs = await abortCommits(retried.email, 1);
    const accepted = await accept(retried.token);
    expect(await runs()).toBe(2);
    expect([accepted.status, typeof accepted.body.data?.access_token]).toEqual([200, 'string']);
    expect(await successes()).toBe(before + 1);

    const givenUpRuns = await abortCommits(givenUp.email, 3);
    const unavailable = await accept(givenUp.token);
    expect(await givenUpRuns()).toBe(3);
    expect([unavailable.status, unavailable.body.error?.code]).toEqual([503, 'UNAVAILABLE']);
    expect(await successes()).toBe(before + 1);
  });
});
