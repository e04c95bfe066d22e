import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MikroORM } from '@mikro-orm/postgresql';
import { ormOptions } from '../../db/orm-config.ts';
import { testDatabaseUrl } from '../../../test/helpers/database.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn, someIp } from '../../../test/helpers/auth.ts';
import { whileHashesWait } from '../../../test/helpers/hashing.ts';
import { call, type ApiResponse } from '../../../test/helpers/http.ts';
import { linkTokenIn, MailSink } from '../../../test/helpers/mail-sink.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { needsPostgres } from '../../../test/helpers/needs.ts';
import { Migration20261204000000_retire_stuck_invitations } from '../../db/migrations/Migration20261204000000_retire_stuck_invitations.ts';

describe('invitations', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({ SMTP_URL: await mail.start(), BASE_URL: 'https://id.example.test' });
    ws = await createWorkspace(app);
  });
  afterAll(async () => {
    await app.close();
    await mail.stop();
  });

  const invite = (body: object, token = ws.apiKey) => call(app, 'POST', '/api/v1/invitations', { token, body });
  /** Each from an address of its own: the per-IP limit of acceptances has a test of its own below. */
  const accept = (body: object) => call(app, 'POST', '/api/v1/invitations/accept', { body, headers: { 'x-forwarded-for': someIp() } });

  it('invites (201), emails a link, and the invitee accepts: user created with the role, signed in', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewer = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const email = uniqueEmail('invitee');
    const created = await invite({ email, role_id: viewer });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ email, role_id: viewer, status: 'pending', accepted_at: null });
    const { link, token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    expect(link.startsWith('https://id.example.test/accept-invitation?token=')).toBe(true);

    const accepted = await accept({ token, password: 'invited passphrase', name: 'New Person' });
    expect(accepted.status).toBe(200);
    // The emailed link proved the address.
    expect(accepted.body.data).toMatchObject({ token_type: 'Bearer', user: { email, name: 'New Person', email_verified: true } });
    expect((await call(app, 'GET', '/api/v1/users', { token: accepted.body.data.access_token })).status).toBe(200);
    expect((await login(app, ws.id, email, 'invited passphrase')).status).toBe(200);

    const listed = await call(app, 'GET', '/api/v1/invitations?status=accepted', { token: ws.apiKey });
    expect(listed.body.data.find((i: { id: string }) => i.id === created.body.data.id)).toMatchObject({
      status: 'accepted',
      user_id: accepted.body.data.user.id,
    });
    const twice = await accept({ token, password: 'invited passphrase' });
    expect([twice.status, twice.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('runs the post-login actions when an invitee accepts, as at every sign-in: a deny refuses the session (403), claims reach the token', async () => {
    const own = await createWorkspace(app);
    const created = await call(app, 'POST', '/api/v1/actions/', {
      token: own.apiKey,
      body: {
        name: 'Gate',
        code: `exports.onExecutePostLogin = async (event, api) => {
  if (event.user.email.startsWith('denied')) return api.access.deny('Not from this team');
  api.accessToken.setCustomClaim('https://example.com/team', 'blue');
};`,
      },
    });
    expect(created.status).toBe(201);
    expect((await call(app, 'POST', `/api/v1/actions/${created.body.data.id}/deploy`, { token: own.apiKey })).status).toBe(200);
    const acceptInvite = async (email: string) => {
      expect((await invite({ email }, own.apiKey)).status).toBe(201);
      return accept({ token: linkTokenIn(await mail.waitFor(email), 'accept-invitation').token, password: 'invited passphrase' });
    };

    const denied = uniqueEmail('denied');
    const refused = await acceptInvite(denied);
    expect([refused.status, refused.body.error?.code, refused.body.error?.message]).toEqual([403, 'FORBIDDEN', 'Not from this team']);
    expect(refused.body.data).toBeUndefined();
    // The account exists (the link was used), and signing in is refused the same way.
    const users = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(denied)}`, { token: own.apiKey });
    expect(users.body.data.map((u: { email: string }) => u.email)).toEqual([denied]);
    expect((await login(app, own.id, denied, 'invited passphrase')).status).toBe(403);

    const welcome = await acceptInvite(uniqueEmail('welcome'));
    expect(welcome.status).toBe(200);
    const claims = JSON.parse(Buffer.from(welcome.body.data.access_token.split('.')[1], 'base64url').toString());
    expect(claims['https://example.com/team']).toBe('blue');
  });

  it('refuses to invite an existing user or an address already invited (409)', async () => {
    expect((await invite({ email: ws.owner.email })).status).toBe(409);
    const email = uniqueEmail('twice');
    expect((await invite({ email })).status).toBe(201);
    const again = await invite({ email });
    expect([again.status, again.body.error.code]).toEqual([409, 'CONFLICT']);
  });

  it('resends at once with a new link (the old one dies)', async () => {
    const email = uniqueEmail('resend');
    const created = await invite({ email });
    const first = linkTokenIn(await mail.waitFor(email), 'accept-invitation').token;
    const resent = await call(app, 'POST', `/api/v1/invitations/${created.body.data.id}/resend`, { token: ws.apiKey });
    expect(resent.status).toBe(200);
    expect(resent.body.data).toMatchObject({ id: created.body.data.id, status: 'pending' });
    const second = linkTokenIn(await mail.waitFor(email, 1), 'accept-invitation').token;
    expect(second).not.toBe(first);
    expect((await accept({ token: first, password: 'invited passphrase' })).status).toBe(401);
    expect((await accept({ token: second, password: 'invited passphrase' })).status).toBe(200);
  });

  it('leaves another workspace’s invitation of the same address pending when a user with it is created here', async () => {
    const other = await createWorkspace(app);
    const email = uniqueEmail('two-workspaces');
    const theirs = await invite({ email }, other.apiKey);
    expect(theirs.status).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'created over here' } })).status).toBe(
      201,
    );
    const read = await call(app, 'GET', `/api/v1/invitations/${theirs.body.data.id}`, { token: other.apiKey });
    expect(read.body.data.status).toBe('pending');
    // The invitee still joins the other workspace with it.
    const accepted = await accept({ token, password: 'invited over there' });
    expect([accepted.status, accepted.body.data.user.email]).toEqual([200, email]);
  });

  /**
   * The tests below hold a row or a lock on a connection of their own while the service's request runs
   * into it: the embedded database is one backend behind one connection, where nothing can wait for
   * anything, so they run on PostgreSQL only.
   */
  const whileLockHeld = needsPostgres(it, 'a connection of the test holds a row lock while the request runs into it');

  /** How many of the test database's connections wait for a lock (PostgreSQL only). */
  const waiting = async (orm: MikroORM) => {
    const [row] = await orm.em.fork().execute<{ n: number }[]>(
      `select count(distinct l.pid)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where not l.granted and a.datname = current_database()`,
    );
    return row?.n ?? 0;
  };
  const until = async (done: () => Promise<boolean>) => {
    while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 20));
  };

  /**
   * An invitation and a user of one address created at once: the invitation, past its check that no
   * user has the address, is held at its insert (a pending row of the address in an open transaction
   * of the test's); the user is created meanwhile. Whatever the order, the address must not end with a
   * user and a pending invitation. PostgreSQL only (the embedded database takes one connection).
   */
  whileLockHeld('never leaves an invitation pending beside a user of its address when both are created at once', async () => {
    const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 2));
    try {
      const email = uniqueEmail('invited-and-created');
      const held = orm.em.fork();
      await held.begin();
      const [member] = await held.execute<{ id: string }[]>(`select id from roles where workspace_id = ? and key = 'member'`, [ws.id]);
      await held.execute(
        `insert into invitations (id, workspace_id, email, role_id, status, token_hash, created_at, expires_at, last_sent_at)
           values (?, ?, ?, ?, 'pending', ?, now(), now() + interval '1 day', now())`,
        [`inv_held${process.pid}`, ws.id, email, member?.id, `held-${email}`],
      );
      const invited = invite({ email });
      await until(async () => (await waiting(orm)) >= 1);
      let created: Awaited<ReturnType<typeof call>> | null = null;
      const creating = call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        body: { email, password: 'created at the same time' },
      }).then((res) => (created = res));
      await until(async () => created !== null || (await waiting(orm)) >= 2);
      await held.rollback();
      const [invitation, user] = await Promise.all([invited, creating]);
      expect([invitation.status, user.status]).toEqual([201, 201]);
      const read = await call(app, 'GET', `/api/v1/invitations/${invitation.body.data.id}`, { token: ws.apiKey });
      expect(read.body.data.status).toBe('revoked');
    } finally {
      await orm.close(true);
    }
  });

  type Answer = ApiResponse<any>;

  /**
   * Holds an acceptance at its invitation's row (locked by an open transaction of the test's), runs
   * `meanwhile` until it too waits for a lock (or answers), then lets both go, in that order. The
   * acceptance is first in line for the row, so it commits before whatever `meanwhile` waits for there.
   */
  async function acceptWhile(invitationId: string, token: string, meanwhile: () => Promise<Answer>, beforeRelease = () => {}) {
    const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 2));
    try {
      const held = orm.em.fork();
      await held.begin();
      await held.execute('select id from invitations where id = ? for update', [invitationId]);
      const accepting = accept({ token, password: 'accepted meanwhile' });
      await until(async () => (await waiting(orm)) >= 1);
      let other: Answer | null = null;
      const running = meanwhile().then((res) => (other = res));
      await until(async () => other !== null || (await waiting(orm)) >= 2);
      beforeRelease();
      await held.rollback();
      const [accepted, answered] = await Promise.all([accepting, running]);
      return { accepted, other: answered };
    } finally {
      await orm.close(true);
    }
  }

  /**
   * An invitation asked for while another of its address is being accepted. Its one statement that
   * can wait between its check that no user has the address and its check that no invitation of it is
   * pending is the one that records a pending invitation past its date as expired: the clock is set to
   * the first invitation's expiry for the new one's request only, so that statement waits on the row
   * the acceptance (held there, its clock a moment earlier) is consuming. Before the acceptance took
   * the address's lock, the new invitation found no user, then no pending invitation (the acceptance
   * had committed in between): 201, pending beside the user. Now it waits for the acceptance: 409.
   */
  whileLockHeld(
    'never leaves an invitation pending beside the user an acceptance of its address creates at the same time (409)',
    async () => {
      const email = uniqueEmail('accepted-and-invited');
      const first = await invite({ email });
      const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
      const before = app.clock.now();
      const { accepted, other } = await acceptWhile(
        first.body.data.id,
        token,
        () => {
          app.clock.set(new Date(first.body.data.expires_at));
          return invite({ email });
        },
        () => app.clock.set(before),
      );
      app.clock.set(before);
      expect(accepted.status).toBe(200);
      expect([other.status, other.body.error?.code, other.body.error?.details]).toEqual([
        409,
        'CONFLICT',
        [{ path: 'email', message: 'belongs to a user already' }],
      ]);
      const pending = await call(app, 'GET', '/api/v1/invitations?status=pending&per_page=100', { token: ws.apiKey });
      expect(pending.body.data.filter((i: { email: string }) => i.email === email)).toEqual([]);
    },
  );

  /**
   * An acceptance and a user's creation of its address at once, the acceptance first at the
   * invitation's row: both take the address's lock before any row, so the creation waits for the
   * acceptance and then finds its user (409), where taking the lock after the invitation's row would
   * deadlock (the creation holding the lock and waiting for the row).
   */
  whileLockHeld(
    'does not deadlock an acceptance with a user created with its address at the same time: the user is the invitee’s, the creation 409',
    async () => {
      const email = uniqueEmail('accepted-and-created');
      const invited = await invite({ email });
      const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
      const { accepted, other } = await acceptWhile(invited.body.data.id, token, () =>
        call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'created at the same time' } }),
      );
      expect([accepted.status, accepted.body.data?.user.email]).toEqual([200, email]);
      expect([other.status, other.body.error?.code]).toEqual([409, 'CONFLICT']);
      const read = await call(app, 'GET', `/api/v1/invitations/${invited.body.data.id}`, { token: ws.apiKey });
      expect(read.body.data).toMatchObject({ status: 'accepted', user_id: accepted.body.data.user.id });
    },
  );

  /**
   * One link used twice at once (a double submit): the second waits for the first, then finds its
   * invitation accepted (401, the dead link's answer). Two different invitations of one address cannot
   * both be accepted at once: at most one of an address is pending (`invitations_one_pending`).
   */
  whileLockHeld('accepts a link used twice at the same time once: 200, then 401', async () => {
    const email = uniqueEmail('accepted-twice');
    const invited = await invite({ email });
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const { accepted, other } = await acceptWhile(invited.body.data.id, token, () => accept({ token, password: 'accepted twice' }));
    expect([accepted.status, accepted.body.data?.user.email]).toEqual([200, email]);
    expect([other.status, other.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  /**
   * A revocation and a resend of an invitation being accepted: each read it pending before the
   * acceptance committed, then wrote over it. The revocation answered 200 and left it `revoked` with
   * its `accepted_at` and user; the resend answered 200 `pending` and emailed a link that could only
   * answer 401. Both now read it again under its address's lock: 409, accepted.
   */
  whileLockHeld('refuses (409) to revoke or resend an invitation being accepted at the same time; it stays accepted', async () => {
    // A workspace of its own: its refusals are audited rows with no target, which other tests' lists would meet.
    const own = await createWorkspace(app);
    for (const change of ['revoke', 'resend'] as const) {
      const email = uniqueEmail(`accepted-and-${change}d`);
      const invited = await invite({ email }, own.apiKey);
      const id = invited.body.data.id;
      const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
      const { accepted, other } = await acceptWhile(id, token, () =>
        change === 'revoke'
          ? call(app, 'DELETE', `/api/v1/invitations/${id}`, { token: own.apiKey })
          : call(app, 'POST', `/api/v1/invitations/${id}/resend`, { token: own.apiKey }),
      );
      expect(accepted.status).toBe(200);
      expect([change, other.status, other.body.error?.code, other.body.error?.message]).toEqual([
        change,
        409,
        'CONFLICT',
        'This invitation is accepted',
      ]);
      const read = await call(app, 'GET', `/api/v1/invitations/${id}`, { token: own.apiKey });
      expect(read.body.data).toMatchObject({ status: 'accepted', user_id: accepted.body.data.user.id });
    }
  });

  /**
   * An owner's invitation accepted while an owner is given its address and locked by one PATCH: the
   * PATCH takes the owner role's row (owner changes go one at a time) and the address's lock; the
   * acceptance needs the owner role's row too, to give its user the role. Taken owner row first, the
   * two waited on each other (a deadlock: one answered 500). The PATCH takes the address's lock first.
   */
  whileLockHeld('does not deadlock an owner’s acceptance with an owner given its address and locked at the same time', async () => {
    const ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const owner = roles.body.data.find((r: { key: string }) => r.key === 'owner').id;
    const second = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('second-owner'), password: 'a second owner' },
    });
    const made = await call(app, 'POST', '/api/v1/roles/assign', {
      token: ownerToken,
      body: { user_id: second.body.data.id, role_id: owner },
    });
    expect(made.status).toBe(201);
    const email = uniqueEmail('owner-invited-and-renamed');
    const invited = await invite({ email, role_id: owner }, ownerToken);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const { accepted, other } = await acceptWhile(invited.body.data.id, token, () =>
      call(app, 'PATCH', `/api/v1/users/${second.body.data.id}`, { token: ownerToken, body: { email, status: 'locked' } }),
    );
    expect([accepted.status, accepted.body.data?.user.email]).toEqual([200, email]);
    expect([other.status, other.body.error?.code]).toEqual([409, 'CONFLICT']);
  });

  /**
   * An owner's invitation accepted while an owner is locked, deactivated or deleted on a connection of
   * the acceptance's `user_counts` slot (backend pid mod 16). That change takes the owner role's row
   * (`lockOwnerRole`), then its user's counter row of its slot. The test's transaction plays it: it holds
   * the owner role's row, lets the acceptance run until it waits, then writes the counter row of the
   * acceptance's slot with the trigger's own statement (+0). The acceptance took its counter row
   * (inserting its user) before the role's row (its assignment's key, checked at COMMIT): the test's
   * write waited for it, and the test's short deadlock_timeout made PostgreSQL abort the test's side
   * (40P01). Now the acceptance takes the role's row first, so it holds no counter row while it waits.
   */
  whileLockHeld('does not deadlock an owner’s acceptance with an owner locked on a connection of its counter slot', async () => {
    const ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const owner = roles.body.data.find((r: { key: string }) => r.key === 'owner').id as string;
    const email = uniqueEmail('owner-invited-while-locking');
    const invited = await invite({ email, role_id: owner }, ownerToken);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 2));
    try {
      const held = orm.em.fork();
      await held.begin();
      await held.execute(`set local deadlock_timeout = '10ms'`);
      await held.execute('select id from roles where id = ? for update', [owner]);
      const accepting = accept({ token, password: 'accepted while locking' });
      await until(async () => (await waiting(orm)) >= 1);
      const [acceptance] = await orm.em
        .fork()
        .execute<{ pid: number }[]>(
          `select l.pid from pg_locks l join pg_stat_activity a on a.pid = l.pid where not l.granted and a.datname = current_database()`,
        );
      const slotWrite = held
        .execute(
          `insert into user_counts (workspace_id, status, slot, n) values (?, 'active', ? % 16, 0)
             on conflict (workspace_id, status, slot) do update set n = user_counts.n + excluded.n`,
          [ws.id, acceptance?.pid],
        )
        .then(
          () => 'written',
          (error: { code?: string }) => error.code,
        );
      const written = await slotWrite;
      await held.rollback();
      const accepted = await accepting;
      expect(written).toBe('written');
      expect([accepted.status, accepted.body.data?.user.email]).toEqual([200, email]);
      const read = await call(app, 'GET', `/api/v1/invitations/${invited.body.data.id}`, { token: ws.apiKey });
      expect(read.body.data.status).toBe('accepted');
    } finally {
      await orm.close(true);
    }
  });

  /**
   * A transaction PostgreSQL aborts for a deadlock is run again (core/trpc.ts `retryingAborted`). The
   * test's transaction holds the role the invitation names (its foreign key, checked at COMMIT, waits for
   * it) and, once the creation waits there past its address's lock and its insert, inserts a pending
   * invitation of the same address, which waits for the creation's: a deadlock, and the creation's side
   * is the one aborted (the test's deadlock_timeout is longer). Run again, the creation waits for the
   * test's rows, which are then rolled back: 201 (500 before), with one audit row, one event and one
   * email.
   */
  whileLockHeld(
    'runs an invitation’s creation again when PostgreSQL aborts it for a deadlock: 201, one audit row, one event, one email',
    async () => {
      const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
      const viewer = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id as string;
      const email = uniqueEmail('invited-after-a-deadlock');
      const orm = await MikroORM.init(ormOptions(testDatabaseUrl(), 2));
      try {
        const held = orm.em.fork();
        await held.begin();
        await held.execute(`set local deadlock_timeout = '1min'`);
        await held.execute('select id from roles where id = ? for update', [viewer]);
        let created: Answer | null = null;
        const creating = invite({ email, role_id: viewer }).then((res) => (created = res));
        await until(async () => (await waiting(orm)) >= 1);
        // Waits for the creation's insert, which waits for this transaction's role row: the creation is aborted.
        await held.execute(
          `insert into invitations (id, workspace_id, email, role_id, status, token_hash, created_at, expires_at, last_sent_at)
           values (?, ?, ?, ?, 'pending', ?, now(), now() + interval '1 day', now())`,
          [`inv_deadlock${process.pid}`, ws.id, email, viewer, `deadlock-${email}`],
        );
        // Run again, it waits for this transaction's rows (a 500 would have answered instead).
        await until(async () => created !== null || (await waiting(orm)) >= 1);
        await held.rollback();
        const answered = (await creating) as Answer;
        expect([answered.status, answered.body.data?.email]).toEqual([201, email]);
        const id = answered.body.data.id as string;
        const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=invitation.create&per_page=100', { token: ws.apiKey });
        expect(audit.body.data.filter((e: { target: { id: string } | null }) => e.target?.id === id)).toHaveLength(1);
        const [rows] = await orm.em.fork().execute<{ events: number; emails: number }[]>(
          `select (select count(*)::int from events where type = 'invitation.created' and payload->>'id' = ?) as events,
                  (select count(*)::int from email_outbox where to_address = ?) as emails`,
          [id, email],
        );
        expect(rows).toEqual({ events: 1, emails: 1 });
        await mail.waitFor(email);
        expect(mail.to(email)).toHaveLength(1);
      } finally {
        await orm.close(true);
      }
    },
  );

  it('revokes a pending invitation when its address gets a user another way (created, or given by an update), audited; resend and accept then answer 409', async () => {
    const email = uniqueEmail('taken-since');
    const created = await invite({ email });
    expect(created.status).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'created meanwhile' } });
    expect(user.status).toBe(201);
    const read = await call(app, 'GET', `/api/v1/invitations/${created.body.data.id}`, { token: ws.apiKey });
    expect(read.body.data).toMatchObject({ status: 'revoked', accepted_at: null, user_id: null });
    const pending = await call(app, 'GET', '/api/v1/invitations?status=pending&per_page=100', { token: ws.apiKey });
    expect(pending.body.data.map((i: { id: string }) => i.id)).not.toContain(created.body.data.id);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=invitation.revoke&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.find((e: { target: { id: string } }) => e.target.id === created.body.data.id)).toMatchObject({
      actor: { type: 'api_key' },
      details: { reason: 'user_exists', user_id: user.body.data.id },
    });
    // Resending could only email a link that answers 409; accepting tells the invitee to sign in.
    const resent = await call(app, 'POST', `/api/v1/invitations/${created.body.data.id}/resend`, { token: ws.apiKey });
    expect([resent.status, resent.body.error?.code]).toEqual([409, 'CONFLICT']);
    const accepted = await accept({ token, password: 'invited passphrase' });
    expect([accepted.status, accepted.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(accepted.body.error.message).toMatch(/already exists: sign in/);

    // An existing user given the invited address by an update retires its invitation the same way.
    const other = uniqueEmail('renamed-onto');
    const second = await invite({ email: other });
    const patched = await call(app, 'PATCH', `/api/v1/users/${user.body.data.id}`, { token: ws.apiKey, body: { email: other } });
    expect(patched.status).toBe(200);
    const retired = await call(app, 'GET', `/api/v1/invitations/${second.body.data.id}`, { token: ws.apiKey });
    expect(retired.body.data.status).toBe('revoked');

    // Once the user is gone, the address can be invited again.
    expect((await call(app, 'DELETE', `/api/v1/users/${user.body.data.id}`, { token: ws.apiKey })).status).toBe(200);
    expect((await invite({ email: other })).status).toBe(201);
  });

  it('retires, once, the invitations earlier versions left pending after their address got a user of the workspace (a migration), by the system', async () => {
    const connection = app.deps.orm.em.getConnection();
    const other = await createWorkspace(app);
    // A user given an invited address by SQL: what an earlier version's create or update left behind.
    const userTaking = async (workspace: TestWorkspace, email: string) => {
      const made = await call(app, 'POST', '/api/v1/users', {
        token: workspace.apiKey,
        body: { email: uniqueEmail('placeholder'), password: 'stuck passphrase' },
      });
      await connection.execute('update users set email = ? where id = ?', [email, made.body.data.id]);
      return made.body.data.id as string;
    };
    const invited = async (workspace: TestWorkspace, email: string) =>
      (await call(app, 'POST', '/api/v1/invitations', { token: workspace.apiKey, body: { email } })).body.data.id as string;

    const [taken, lapsed, free, elsewhere] = ['stuck', 'stuck-lapsed', 'no-user', 'user-elsewhere'].map((label) => uniqueEmail(label));
    const stuck = await invited(ws, taken as string);
    const stuckUser = await userTaking(ws, taken as string);
    const stuckLapsed = await invited(ws, lapsed as string);
    await userTaking(ws, lapsed as string);
    await connection.execute(`update invitations set expires_at = now() - interval '1 day' where id = ?`, [stuckLapsed]);
    const noUser = await invited(ws, free as string);
    // The same address invited in another workspace, whose user is only in the first one.
    const otherInvitation = await invited(other, taken as string);
    // An address whose user lives in another workspace only.
    const userElsewhere = await invited(ws, elsewhere as string);
    await userTaking(other, elsewhere as string);
    const status = async (workspace: TestWorkspace, id: string) =>
      (await call(app, 'GET', `/api/v1/invitations/${id}`, { token: workspace.apiKey })).body.data.status;
    expect(await status(ws, stuck)).toBe('pending');

    const revocations = async (workspace: TestWorkspace) =>
      (await call(app, 'GET', '/api/v1/audit/events/?event_type=invitation.revoke&per_page=100', { token: workspace.apiKey })).body.data;
    const migrate = async () => {
      const migration = new Migration20261204000000_retire_stuck_invitations(app.deps.orm.em.getDriver(), app.deps.orm.config);
      await migration.up();
      for (const query of migration.getQueries()) await connection.execute(query as string);
    };
    await migrate();

    expect(await status(ws, stuck)).toBe('revoked');
    const pending = await call(app, 'GET', '/api/v1/invitations?status=pending&per_page=100', { token: ws.apiKey });
    expect(pending.body.data.map((i: { id: string }) => i.id)).not.toContain(stuck);
    expect(await status(ws, stuckLapsed)).toBe('expired');
    expect(await status(ws, noUser)).toBe('pending');
    expect(await status(ws, userElsewhere)).toBe('pending');
    expect(await status(other, otherInvitation)).toBe('pending');
    const audited = (await revocations(ws)).filter((e: { target: { id: string } }) =>
      [stuck, stuckLapsed, noUser, userElsewhere].includes(e.target.id),
    );
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({
      event_type: 'invitation.revoke',
      outcome: 'success',
      actor: { type: 'system', id: null },
      target: { type: 'invitation', id: stuck },
      details: { reason: 'user_exists', user_id: stuckUser },
    });
    expect((await call(app, 'GET', `/api/v1/audit/events/${audited[0].id}`, { token: ws.apiKey })).status).toBe(200);
    expect((await revocations(other)).map((e: { target: { id: string } }) => e.target.id)).not.toContain(otherInvitation);
    // The retired invitation answers as one the live path retired; the others still work.
    const resent = await call(app, 'POST', `/api/v1/invitations/${stuck}/resend`, { token: ws.apiKey });
    expect([resent.status, resent.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect((await call(app, 'POST', `/api/v1/invitations/${otherInvitation}/resend`, { token: other.apiKey })).status).toBe(200);

    // A second run finds nothing left to retire.
    const before = (await revocations(ws)).length;
    await migrate();
    expect((await revocations(ws)).length).toBe(before);
  });

  it('counts acceptances per IP on their own: ten a minute, and the password endpoints keep theirs', async () => {
    const ip = someIp();
    const from = { 'x-forwarded-for': ip };
    for (let i = 0; i < 10; i++) {
      const res = await call(app, 'POST', '/api/v1/invitations/accept', {
        headers: from,
        body: { token: 'inv_guess', password: 'guessing passphrase' },
      });
      expect(res.status).toBe(401);
    }
    const eleventh = await call(app, 'POST', '/api/v1/invitations/accept', {
      headers: from,
      body: { token: 'inv_guess', password: 'guessing passphrase' },
    });
    expect([eleventh.status, eleventh.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    const forgot = await call(app, 'POST', '/api/v1/auth/password/forgot', {
      headers: { ...from, 'x-tenant-id': ws.id },
      body: { email: uniqueEmail('forgetful') },
    });
    expect(forgot.status).toBe(200);
  });

  it('revokes (the link dies) and expires after 7 days', async () => {
    const email = uniqueEmail('revoked');
    const created = await invite({ email });
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const revoked = await call(app, 'DELETE', `/api/v1/invitations/${created.body.data.id}`, { token: ws.apiKey });
    expect(revoked.body.data).toEqual({ id: created.body.data.id, deleted: true });
    expect((await accept({ token, password: 'invited passphrase' })).status).toBe(401);

    const later = uniqueEmail('later');
    const pending = await invite({ email: later });
    const laterToken = linkTokenIn(await mail.waitFor(later), 'accept-invitation').token;
    app.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const expired = await call(app, 'GET', '/api/v1/invitations?status=expired&per_page=100', { token: ws.apiKey });
    expect(expired.body.data.map((i: { id: string }) => i.id)).toContain(pending.body.data.id);
    expect((await accept({ token: laterToken, password: 'invited passphrase' })).status).toBe(401);
    expect((await invite({ email: later })).status).toBe(201);
  });

  it('reads one invitation by id with its live status (200), for readers only; unknown or another workspace’s is 404', async () => {
    const email = uniqueEmail('one');
    const created = await invite({ email });
    const got = await call(app, 'GET', `/api/v1/invitations/${created.body.data.id}`, { token: ws.apiKey });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(created.body.data);
    await call(app, 'DELETE', `/api/v1/invitations/${created.body.data.id}`, { token: ws.apiKey });
    expect((await call(app, 'GET', `/api/v1/invitations/${created.body.data.id}`, { token: ws.apiKey })).body.data.status).toBe('revoked');
    expect((await call(app, 'GET', '/api/v1/invitations/inv_missing', { token: ws.apiKey })).body.error.code).toBe('NOT_FOUND');
    const other = await createWorkspace(app);
    expect((await call(app, 'GET', `/api/v1/invitations/${created.body.data.id}`, { token: other.apiKey })).status).toBe(404);
    const memberEmail = uniqueEmail('reader');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: memberEmail, password: 'invited passphrase' } });
    const member = await signIn(app, ws.id, memberEmail, 'invited passphrase');
    const refused = await call(app, 'GET', `/api/v1/invitations/${created.body.data.id}`, { token: member.accessToken });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('lets only owners invite owners; keeps invitations per workspace; refuses short passwords', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const owner = roles.body.data.find((r: { key: string }) => r.key === 'owner').id;
    expect((await invite({ email: uniqueEmail(), role_id: owner })).status).toBe(403);
    const ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    expect((await invite({ email: uniqueEmail(), role_id: owner }, ownerToken)).status).toBe(201);

    const other = await createWorkspace(app);
    const theirs = await invite({ email: uniqueEmail() }, other.apiKey);
    expect((await call(app, 'DELETE', `/api/v1/invitations/${theirs.body.data.id}`, { token: ws.apiKey })).status).toBe(404);
    expect((await call(app, 'POST', `/api/v1/invitations/${theirs.body.data.id}/resend`, { token: ws.apiKey })).status).toBe(404);

    const email = uniqueEmail('weak');
    await invite({ email });
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    expect((await accept({ token, password: 'seven77' })).status).toBe(400);
    expect((await accept({ token, password: 'a decent passphrase' })).status).toBe(200);
  });

  it('takes the role by key as assignments do, and `role` for role_id; the grant rules hold; both at once is 400', async () => {
    const roles = (await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey })).body.data as { id: string; key: string }[];
    const id = (key: string) => roles.find((r) => r.key === key)?.id;
    for (const body of [{ role_id: 'viewer' }, { role: 'viewer' }, { role: id('viewer') }]) {
      const created = await invite({ email: uniqueEmail('by-key'), ...body });
      expect(created.status, JSON.stringify(body)).toBe(201);
      expect(created.body.data).toMatchObject({ role_id: id('viewer') });
      expect(created.body.data).not.toHaveProperty('role');
    }
    const email = uniqueEmail('as-viewer');
    await invite({ email, role: 'viewer' });
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const accepted = await accept({ token, password: 'invited passphrase' });
    const held = await call(app, 'GET', `/api/v1/users/${accepted.body.data.user.id}/roles`, { token: ws.apiKey });
    expect(held.body.data.map((r: { key: string }) => r.key)).toEqual(['viewer']);

    // Only owners invite owners, whichever name and form the role comes in.
    for (const body of [{ role_id: 'owner' }, { role: 'owner' }]) {
      const refused = await invite({ email: uniqueEmail('climber'), ...body });
      expect([refused.status, refused.body.error.code], JSON.stringify(body)).toEqual([403, 'FORBIDDEN']);
    }
    const ownerToken = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    expect((await invite({ email: uniqueEmail('co-owner'), role: 'owner' }, ownerToken)).status).toBe(201);
    // Nobody hands out more than they hold: a role manager without every permission cannot invite an admin.
    const manager = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: 'Inviter', permissions: ['users:read', 'users:write'] },
    });
    const inviter = { email: uniqueEmail('inviter'), password: 'inviter passphrase' };
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: inviter });
    await call(app, 'POST', '/api/v1/roles/assign', {
      token: ws.apiKey,
      body: { user_id: user.body.data.id, role_id: manager.body.data.id },
    });
    const inviterToken = (await signIn(app, ws.id, inviter.email, inviter.password)).accessToken;
    expect((await invite({ email: uniqueEmail('admin'), role: 'admin' }, inviterToken)).status).toBe(403);
    expect((await invite({ email: uniqueEmail('member'), role: 'member' }, inviterToken)).status).toBe(201);

    const other = await createWorkspace(app);
    const theirs = (await call(app, 'GET', '/api/v1/roles', { token: other.apiKey })).body.data.find(
      (r: { key: string }) => r.key === 'viewer',
    ).id;
    for (const role of ['nope', theirs]) {
      const missing = await invite({ email: uniqueEmail('missing'), role });
      expect([missing.status, missing.body.error.code], role).toEqual([404, 'NOT_FOUND']);
    }
    const both = await invite({ email: uniqueEmail('both'), role: 'viewer', role_id: 'viewer' });
    expect([both.status, both.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(both.body.error.details).toEqual([{ path: 'role', message: 'send role_id or role, not both' }]);
  });

  it('audits refused acceptances of a known invitation in its workspace (used, revoked, expired, address taken); an unknown token names none', async () => {
    const failures = async () =>
      (await call(app, 'GET', '/api/v1/audit/events/?event_type=invitation.accept&outcome=failure&per_page=100', { token: ws.apiKey })).body
        .data as { request_id: string; actor: { type: string }; target: { type: string; id: string } | null; details: object }[];
    const invited = async (label: string) => {
      const email = uniqueEmail(label);
      const created = await invite({ email });
      return { email, id: created.body.data.id as string, token: linkTokenIn(await mail.waitFor(email), 'accept-invitation').token };
    };
    const refused = async (invitation: { id: string; token: string }, status: number, code: string, reason: string) => {
      const res = await accept({ token: invitation.token, password: 'invited passphrase' });
      expect([res.status, res.body.error.code], reason).toEqual([status, code]);
      const row = (await failures()).find((e) => e.request_id === res.headers.get('x-request-id'));
      expect(row, reason).toMatchObject({
        actor: { type: 'system' },
        target: { type: 'invitation', id: invitation.id },
        details: { reason },
      });
    };
    const used = await invited('used');
    expect((await accept({ token: used.token, password: 'invited passphrase' })).status).toBe(200);
    await refused(used, 401, 'INVALID_TOKEN', 'invitation_accepted');
    const revoked = await invited('refused-revoked');
    await call(app, 'DELETE', `/api/v1/invitations/${revoked.id}`, { token: ws.apiKey });
    await refused(revoked, 401, 'INVALID_TOKEN', 'invitation_revoked');
    const taken = await invited('taken');
    await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: taken.email, password: 'created meanwhile' } });
    await refused(taken, 409, 'CONFLICT', 'user_exists');
    // The address that has a user now is not given a second one; the invitation was revoked when the user was created.
    const revokedNow = await call(app, 'GET', '/api/v1/invitations?status=revoked&per_page=100', { token: ws.apiKey });
    expect(revokedNow.body.data.map((i: { id: string }) => i.id)).toContain(taken.id);
    const expired = await invited('refused-expired');
    app.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    await refused(expired, 401, 'INVALID_TOKEN', 'invitation_expired');

    const unknown = await accept({ token: 'inv_nobody_has_this_token', password: 'invited passphrase' });
    expect(unknown.status).toBe(401);
    const anywhere = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ n: number }[]>('select count(*)::int as n from audit_events where request_id = ?', [unknown.headers.get('x-request-id')]);
    expect(anywhere).toEqual([{ n: 0 }]);
  });

  it('revokes the pending invitations of a deleted role, audited; the others keep their row without the role', async () => {
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: `Doomed ${uniqueEmail()}`, permissions: ['users:read'] },
    });
    const roleId = role.body.data.id as string;
    const invited = async (label: string) => {
      const email = uniqueEmail(label);
      const created = await invite({ email, role_id: roleId });
      expect(created.status).toBe(201);
      return { id: created.body.data.id as string, token: linkTokenIn(await mail.waitFor(email), 'accept-invitation').token };
    };
    const expired = await invited('doomed-expired');
    app.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    const pending = await invited('doomed-pending');
    const accepted = await invited('doomed-accepted');
    expect((await accept({ token: accepted.token, password: 'invited passphrase' })).status).toBe(200);

    const deleted = await call(app, 'DELETE', `/api/v1/roles/${roleId}`, { token: ws.apiKey });
    expect(deleted.status).toBe(200);
    const all = await call(app, 'GET', '/api/v1/invitations?per_page=100', { token: ws.apiKey });
    const byId = (id: string) => all.body.data.find((i: { id: string }) => i.id === id);
    expect(byId(pending.id)).toMatchObject({ status: 'revoked', role_id: null });
    expect(byId(accepted.id)).toMatchObject({ status: 'accepted', role_id: null });
    expect(byId(expired.id)).toMatchObject({ status: 'expired', role_id: null });
    const link = await accept({ token: pending.token, password: 'invited passphrase' });
    expect([link.status, link.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

    const audit = async (type: string) =>
      (await call(app, 'GET', `/api/v1/audit/events/?event_type=${type}&per_page=100`, { token: ws.apiKey })).body.data as {
        request_id: string;
        target: { id: string } | null;
        details: Record<string, unknown>;
      }[];
    const requestId = deleted.headers.get('x-request-id');
    const revocations = (await audit('invitation.revoke')).filter((e) => e.request_id === requestId);
    expect(revocations).toEqual([
      expect.objectContaining({
        target: expect.objectContaining({ id: pending.id }),
        details: { reason: 'role_deleted', role_id: roleId, role: role.body.data.key },
      }),
    ]);
    expect((await audit('role.delete')).find((e) => e.request_id === requestId)?.details).toMatchObject({ revoked_invitations: 1 });
  });

  it('holds no database connection while an acceptance’s password waits for Argon2id', async () => {
    const emails = Array.from({ length: 6 }, () => uniqueEmail('queued'));
    const tokens: string[] = [];
    for (const email of emails) {
      expect((await invite({ email })).status).toBe(201);
      tokens.push(linkTokenIn(await mail.waitFor(email), 'accept-invitation').token);
    }
    // More acceptances waiting for a hashing slot than the pool has connections.
    const { meanwhile, results } = await whileHashesWait(
      tokens.length,
      (i) => accept({ token: tokens[i], password: 'invited passphrase' }),
      () => call(app, 'GET', '/api/v1/invitations?per_page=1', { token: ws.apiKey }),
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual(tokens.map(() => 200));
  });
});
