import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../src/core/ids.ts';
import type { Logger } from '../src/core/logger.ts';
import { DAY } from '../src/core/clock.ts';
import { Sweeper, sweepOf } from '../src/core/sweeper.ts';
import { sessionSweep } from '../src/modules/auth/retention.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login, signIn, someIp } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { cliDatabase, runCli, type CliDatabase } from './helpers/cli.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';
import { authenticatorOf, codeAt } from './helpers/authenticator.ts';

const PASSWORD = 'retention passphrase';

/**
 * The hourly retention sweep (src/retention.ts). Rows are made "old" by moving this app's clock back
 * while they are written, then the sweep runs at the real time: what is past its keep goes, what is
 * not stays. The test app's own webhook dispatcher is stopped so that a clock in the past never
 * touches other files' deliveries.
 */
describe('retention sweep', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const realNow = Date.now();

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    await app.deps.webhooks.stop();
    ws = await createWorkspace(app, 'Retention');
  });
  afterAll(() => app.close());

  const at = (ago: number) => app.clock.set(new Date(realNow - ago));
  const sql = <T = Record<string, unknown>>(text: string, values: unknown[] = []) =>
    app.deps.orm.em.getConnection().execute<T[]>(text, values);
  const ids = async (text: string, values: unknown[]) => (await sql<{ id: string }>(text, values)).map((r) => r.id).sort();

  async function newUser() {
    const email = uniqueEmail('kept');
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    expect(created.status).toBe(201);
    return { email, id: created.body.data.id as string };
  }

  const refresh = (token: string) => call(app, 'POST', '/api/v1/auth/refresh', { body: { refresh_token: token } });

  it('deletes sessions a week after they ended or expired, with their refresh tokens; a live session keeps its used tokens, so reuse is still caught', async () => {
    const user = await newUser();
    at(40 * DAY);
    const expired = await signIn(app, ws.id, user.email, PASSWORD);
    at(10 * DAY);
    const ended = await signIn(app, ws.id, user.email, PASSWORD);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: ended.accessToken })).status).toBe(200);
    at(3 * DAY);
    const endedLately = await signIn(app, ws.id, user.email, PASSWORD);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: endedLately.accessToken })).status).toBe(200);
    at(0);
    const live = await signIn(app, ws.id, user.email, PASSWORD);
    const second = await refresh(live.refreshToken);
    expect(second.status).toBe(200);
    const third = await refresh(second.body.data.refresh_token);
    expect(third.status).toBe(200);

    const swept = await app.deps.sweeper.sweep();
    expect(swept.sessions).toBeGreaterThanOrEqual(2);

    expect(await ids('select id from sessions where user_id = ?', [user.id])).toEqual([endedLately.sessionId, live.sessionId].sort());
    const tokens = await sql<{ session_id: string; n: number }>(
      'select session_id, count(*)::int as n from refresh_tokens where session_id in (?, ?, ?, ?) group by session_id',
      [expired.sessionId, ended.sessionId, endedLately.sessionId, live.sessionId],
    );
    expect(Object.fromEntries(tokens.map((t) => [t.session_id, t.n]))).toEqual({ [endedLately.sessionId]: 1, [live.sessionId]: 3 });

    // The first token of the live session was used and kept: presenting it again ends the session.
    expect((await refresh(live.refreshToken)).body.error.code).toBe('INVALID_TOKEN');
    expect((await refresh(third.body.data.refresh_token)).body.error.code).toBe('INVALID_TOKEN');
  });

  it('goes on with the other tables when one sweep fails, and logs the failure', async () => {
    const user = await newUser();
    at(10 * DAY);
    const ended = await signIn(app, ws.id, user.email, PASSWORD);
    expect((await call(app, 'POST', '/api/v1/auth/logout', { token: ended.accessToken })).status).toBe(200);
    at(0);
    const failures: string[] = [];
    const log: Logger = { ...app.deps.log, error: (msg, fields) => failures.push(`${msg} ${String(fields?.table)}`) };
    const broken = sweepOf('no_such_table', 'created_at < $1', DAY);
    const swept = await new Sweeper(app.deps.orm, app.deps.clock, log, [broken, sessionSweep]).sweep();
    expect(failures).toEqual(['retention sweep failed no_such_table']);
    expect(swept.no_such_table).toBe(0);
    expect(await ids('select id from sessions where user_id = ?', [user.id])).toEqual([]);
  });

  it('deletes reset links and sign-in challenges a day after they expired, and mail a week after it was sent', async () => {
    const user = await newUser();
    const forgot = () =>
      call(app, 'POST', '/api/v1/auth/password/forgot', {
        headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': someIp() },
        body: { email: user.email },
      });
    at(8 * DAY);
    expect((await forgot()).status).toBe(200);
    at(0);
    expect((await forgot()).status).toBe(200);
    await vi.waitFor(
      async () => {
        const pending = await sql<{ n: number }>(
          `select count(*)::int as n from email_outbox where to_address = ? and status = 'pending'`,
          [user.email],
        );
        expect(pending[0]?.n).toBe(0);
      },
      { timeout: 15_000, interval: 100 },
    );

    const session = await signIn(app, ws.id, user.email, PASSWORD);
    const enrollment = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token: session.accessToken, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrollment.body.data.otpauth_uri);
    const verified = await call(app, 'POST', `/api/v1/mfa/factors/${enrollment.body.data.factor.id}/verify`, {
      token: session.accessToken,
      body: { code: codeAt(totp, app.clock) },
    });
    expect(verified.status).toBe(200);
    at(2 * DAY);
    expect((await login(app, ws.id, user.email, PASSWORD)).body.data.mfa_required).toBe(true);
    at(0);
    const current = await login(app, ws.id, user.email, PASSWORD);
    expect(current.body.data.mfa_required).toBe(true);

    await app.deps.sweeper.sweep();

    const resets = await sql<{ created_at: Date }>('select created_at from password_reset_tokens where user_id = ?', [user.id]);
    expect(resets.map((r) => new Date(r.created_at).getTime())).toEqual([realNow]);
    const mails = await sql<{ created_at: Date }>('select created_at from email_outbox where to_address = ?', [user.email]);
    expect(mails.map((r) => new Date(r.created_at).getTime())).toEqual([realNow]);
    expect(await ids('select id from mfa_challenges where user_id = ?', [user.id])).toEqual([current.body.data.challenge_id]);
  });

  it('keeps risk scores for the 90 days the new-address signal reads, and fanned-out events a week', async () => {
    const user = await newUser();
    at(100 * DAY);
    expect((await login(app, ws.id, user.email, 'not the password')).status).toBe(401);
    const old = await signIn(app, ws.id, user.email, PASSWORD);
    at(80 * DAY);
    expect((await login(app, ws.id, user.email, 'not the password')).status).toBe(401);
    at(0);
    const recent = await signIn(app, ws.id, user.email, PASSWORD);
    await app.deps.webhooks.tick();

    await app.deps.sweeper.sweep();

    const scores = await sql<{ created_at: Date }>('select created_at from risk_scores where email = ? order by created_at', [user.email]);
    expect(scores.map((r) => new Date(r.created_at).getTime())).toEqual([realNow - 80 * DAY, realNow]);
    const events = await sql<{ session_id: string }>(
      `select payload->>'session_id' as session_id from events where workspace_id = ? and type = 'user.signed_in' and payload->>'user_id' = ?`,
      [ws.id, user.id],
    );
    expect(events.map((e) => e.session_id)).toEqual([recent.sessionId]);
    expect(old.sessionId).not.toBe(recent.sessionId);
  });

  it('deletes finished webhook deliveries 30 days after their last attempt, never a pending one', async () => {
    const endpoint = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: 'http://127.0.0.1:9/hooks' } });
    expect(endpoint.status).toBe(201);
    const endpointId = endpoint.body.data.id as string;
    const delivery = async (status: string, ago: number) => {
      const id = newId('dlv');
      const when = new Date(realNow - ago);
      await sql(
        `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_type, payload, status, attempts, scheduled_attempts,
                                         next_attempt_at, created_at, updated_at)
         values (?, ?, ?, 'webhook.test', '{}'::jsonb, ?, 1, 1, ?, ?, ?)`,
        [id, ws.id, endpointId, status, status === 'pending' ? new Date(realNow + DAY) : null, when, when],
      );
      await sql(
        `insert into webhook_attempts (id, workspace_id, delivery_id, attempted_at, response_status, duration_ms) values (?, ?, ?, ?, 200, 5)`,
        [newId('wat'), ws.id, id, when],
      );
      return id;
    };
    const oldSucceeded = await delivery('succeeded', 31 * DAY);
    const oldFailed = await delivery('failed', 31 * DAY);
    const oldPending = await delivery('pending', 31 * DAY);
    const recent = await delivery('succeeded', 29 * DAY);

    await app.deps.sweeper.sweep();

    const listed = await call(app, 'GET', `/api/v1/webhooks/${endpointId}/deliveries`, { token: ws.apiKey });
    expect(listed.body.data.map((d: { id: string }) => d.id).sort()).toEqual([oldPending, recent].sort());
    expect(await ids('select delivery_id as id from webhook_attempts where delivery_id in (?, ?)', [oldSucceeded, oldFailed])).toEqual([]);
  });

  it('deletes Admin Portal links, social sign-ins in flight and OAuth artifacts a day after they expired', async () => {
    const org = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Swept Org' } });
    expect(org.status).toBe(201);
    const link = (ago: number) => {
      at(ago);
      return call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization_id: org.body.data.id } });
    };
    expect((await link(2 * DAY)).status).toBe(201);
    expect((await link(0)).status).toBe(201);

    const external = async (ago: number, codeAgo: number | null) => {
      const id = newId('xsi');
      await sql(
        `insert into external_sign_ins (id, workspace_id, kind, source, state_hash, flow_sealed, redirect_uri, expires_at, code_hash,
                                        code_expires_at, created_at)
         values (?, ?, 'social', 'oidc', ?, 'sealed', 'https://app.example.com/cb', ?, ?, ?, ?)`,
        [
          id,
          ws.id,
          randomUUID(),
          new Date(realNow - ago),
          randomUUID(),
          codeAgo === null ? null : new Date(realNow - codeAgo),
          new Date(realNow - ago),
        ],
      );
      return id;
    };
    await external(2 * DAY, null);
    await external(3 * DAY, 2 * DAY);
    const codeStillFresh = await external(3 * DAY, -DAY);
    const oidc = async (ago: number) => {
      const id = randomUUID();
      await sql(`insert into oidc_payloads (kind, id, payload, expires_at) values ('Interaction', ?, '{}'::jsonb, ?)`, [
        id,
        new Date(realNow - ago),
      ]);
      return id;
    };
    const oidcExpired = await oidc(2 * DAY);
    const oidcKept = await oidc(DAY / 2);

    await app.deps.sweeper.sweep();

    const links = await sql<{ created_at: Date }>('select created_at from portal_links where organization_id = ?', [org.body.data.id]);
    expect(links.map((r) => new Date(r.created_at).getTime())).toEqual([realNow]);
    expect(await ids('select id from external_sign_ins where workspace_id = ?', [ws.id])).toEqual([codeStillFresh]);
    expect(await ids(`select id from oidc_payloads where kind = 'Interaction' and id in (?, ?)`, [oidcExpired, oidcKept])).toEqual([
      oidcKept,
    ]);
  });
});

describe('npm run cli -- sweep', () => {
  let database: CliDatabase;
  beforeAll(async () => {
    database = await cliDatabase('sweep_cli');
  });
  afterAll(() => database?.drop());

  it('sweeps once and prints what it deleted, for deployments whose servers never live an hour', async () => {
    const cli = async (...args: string[]) => {
      const result = await runCli(database.env, ...args);
      expect(result.code, result.stderr).toBe(0);
      return result;
    };
    const created = JSON.parse(
      (await cli('workspaces', 'create', '--name', 'Swept', '--owner-email', uniqueEmail('sweep'), '--owner-password', PASSWORD)).stdout,
    );
    const { orm, close } = await database.open();
    const reset = `insert into password_reset_tokens (id, workspace_id, user_id, token_hash, created_at, expires_at)
                   values (?, ?, ?, ?, now() - ?::interval, now() - ?::interval + interval '30 minutes')`;
    for (const ago of ['3 days', '1 hour']) {
      await orm.em.getConnection().execute(reset, [newId('prt'), created.workspace.id, created.owner.id, randomUUID(), ago, ago]);
    }
    await close();

    const { stdout } = await cli('sweep');
    expect(JSON.parse(stdout)).toEqual({ deleted: expect.objectContaining({ password_reset_tokens: 1, sessions: 0 }) });
  }, 90_000);
});
