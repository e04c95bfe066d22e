import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, sessionsCall, signedIn, tokensOf } from './flows.ts';
import {
  API_KEY,
  AppProcess,
  OWNER_EMAIL,
  OWNER_PASSWORD,
  PgCluster,
  RedisServer,
  WebhookReceiver,
  errorCode,
  freshIp,
  loop,
  request,
  waitFor,
} from './harness.ts';

/**
 * The app killed with SIGKILL while webhook deliveries are being sent (the receiver answers slowly)
 * and refresh tokens are being rotated, then started again. Nothing the app had committed may be
 * lost or left half-done.
 */
interface Family {
  ip: string;
  sessionId: string;
  access: string;
  /** The refresh token the client holds now. */
  current: string;
  /** Tokens the client already swapped (each one answered). */
  used: string[];
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

describe('the app killed (SIGKILL) with deliveries and rotations in flight', () => {
  let pg: PgCluster;
  let redis: RedisServer;
  let app: AppProcess;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    pg = await PgCluster.create();
    redis = await RedisServer.start();
    app = await AppProcess.start({ databaseUrl: pg.url, redisUrl: redis.url });
  });

  afterAll(async () => {
    await app?.kill('SIGTERM');
    await receiver.close();
    await redis?.kill();
    pg?.destroy();
  });

  it('delivers every committed event after the restart, leaves no refresh family inconsistent, and old tokens still verify', async () => {
    const tenant = pg.query<{ id: string }>('select id from workspaces')[0]?.id as string;
    const endpoint = await createEndpoint(app.url, await receiver.start());
    receiver.secret = endpoint.secret;
    receiver.delayMs = 400;

    // Six families rotate as fast as they can through the crash; a seventh rotated twice before it and
    // then rests, so the replay of a rotated token is checked on every run whatever the crash cut off.
    const families: Family[] = [];
    for (let i = 0; i < 7; i += 1) {
      const tokens = await signedIn(app.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);
      families.push({
        ip: freshIp(),
        sessionId: String(decodeJwt(tokens.access).sid),
        access: tokens.access,
        current: tokens.refresh,
        used: [],
      });
    }

    const resting = families[6] as Family;
    for (let i = 0; i < 2; i += 1) {
      const reply = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: resting.ip, body: { refresh_token: resting.current } });
      resting.used.push(resting.current);
      Object.assign(resting, { current: tokensOf(reply).refresh, access: tokensOf(reply).access });
    }

    let crashed = false;
    const unexpected: string[] = [];
    const rotations = loop(6, async (i) => {
      const family = families[i] as Family;
      const reply = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: family.ip, body: { refresh_token: family.current } });
      if (reply.status === 200 && !crashed) {
        const tokens = tokensOf(reply);
        family.used.push(family.current);
        family.current = tokens.refresh;
        family.access = tokens.access;
      } else if (reply.status !== 0) unexpected.push(`refresh ${reply.status} ${JSON.stringify(reply.body)}`);
      await sleep(crashed ? 50 : 15);
    });
    const stem = randomUUID().slice(0, 8);
    const acknowledged: string[] = [];
    const creations = loop(2, async (worker, round) => {
      const email = `crash-${worker}-${round}-${stem}@faults.test`;
      const reply = await request(app.url, 'POST', '/api/v1/users', {
        token: API_KEY,
        ip: freshIp(),
        body: { email, password: 'a long enough password' },
      });
      if (reply.status === 201) acknowledged.push(email);
      else if (reply.status !== 0) unexpected.push(`create ${reply.status} ${JSON.stringify(reply.body)}`);
      if (crashed) await sleep(50);
    });

    await waitFor(
      'deliveries and rotations under way',
      async () => (receiver.received.length >= 8 && families.slice(0, 6).every((f) => f.used.length >= 3) ? true : undefined),
      30_000,
      20,
    );
    await app.kill('SIGKILL');
    crashed = true;
    await Promise.all([rotations.stop(), creations.stop()]);
    const atCrash = pg.query<{ leased: number; pending: number; unfanned: number }>(
      `select (select count(*) from webhook_deliveries where status = 'pending' and lease_until > now())::int as leased,
              (select count(*) from webhook_deliveries where status = 'pending')::int as pending,
              (select count(*) from events where fanned_out_at is null)::int as unfanned`,
    )[0];
    const receivedAtCrash = receiver.received.length;
    // Deliveries were in flight: claimed under a lease that the dead process will never release.
    expect(atCrash?.leased).toBeGreaterThan(0);

    const restartedAt = performance.now();
    receiver.delayMs = 0;
    app = await app.restart();
    const restartMs = performance.now() - restartedAt;

    // Refresh families: at most one live token each, exactly one while the session lives.
    const ids = families.map((f) => `'${f.sessionId}'`).join(',');
    const liveTokens = () =>
      pg.query<{ id: string; ended: boolean; live: number }>(
        `select s.id, s.ended_at is not null as ended,
                (select count(*) from refresh_tokens r where r.session_id = s.id and r.used_at is null and r.expires_at > now())::int as live
           from sessions s where s.id in (${ids})`,
      );
    for (const row of liveTokens()) expect(row, JSON.stringify(row)).toMatchObject({ ended: false, live: 1 });

    // Tokens issued before the crash still verify: against the JWKS, and on the API while the session lives.
    const jwks = await request(app.url, 'GET', '/.well-known/jwks.json');
    const keySet = createLocalJWKSet(jwks.body as JSONWebKeySet);
    for (const family of families) {
      const { payload } = await jwtVerify(family.access, keySet, { issuer: app.url });
      expect(payload.sid).toBe(family.sessionId);
      expect((await sessionsCall(app.url, family.access)).status).toBe(200);
    }

    // The client's refresh token: it works, unless the crash cut off the answer of a rotation the
    // server had committed; then the client holds a used token, and presenting it ends the session.
    let inSync = 0;
    let cutOff = 0;
    for (const family of families) {
      const [stored] = pg.query<{ used: boolean }>(
        `select used_at is not null as used from refresh_tokens where token_hash = '${hash(family.current)}'`,
      );
      const reply = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: family.ip, body: { refresh_token: family.current } });
      if (stored?.used) {
        cutOff += 1;
        expect([reply.status, errorCode(reply)]).toEqual([401, 'INVALID_TOKEN']);
        expect((await sessionsCall(app.url, family.access)).status).toBe(401);
        continue;
      }
      inSync += 1;
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const fresh = tokensOf(reply);
      // A rotated token presented again ends the whole session: its newest tokens stop working too.
      const replay = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: family.ip, body: { refresh_token: family.used.at(-1) } });
      expect([replay.status, errorCode(replay)]).toEqual([401, 'INVALID_TOKEN']);
      expect((await sessionsCall(app.url, fresh.access)).status).toBe(401);
      const after = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: family.ip, body: { refresh_token: fresh.refresh } });
      expect(after.status).toBe(401);
    }
    expect(inSync).toBeGreaterThanOrEqual(1);
    const ended = pg.query<{ end_reason: string }>(`select end_reason from sessions where id in (${ids})`);
    expect(ended.map((s) => s.end_reason)).toEqual(Array(families.length).fill('refresh_token_reuse'));
    for (const row of liveTokens()) expect(row.live).toBeLessThanOrEqual(1);

    // Webhooks: every committed event fanned out, every delivery sent and recorded, each received
    // with a valid signature; a delivery cut off by the crash came again with the same webhook-id.
    const deliveries = await waitFor(
      'every delivery to be received and recorded',
      async () => {
        const rows = pg.query<{ id: string; status: string; event_id: string }>('select id, status, event_id from webhook_deliveries');
        const unfanned = pg.query<{ id: string }>('select id from events where fanned_out_at is null');
        const received = receiver.counts();
        return unfanned.length === 0 && rows.every((r) => r.status === 'succeeded' && received.has(r.id)) ? rows : undefined;
      },
      40_000, // the dead instance's leases (20 s) expire well before this
      250,
    );
    const redeliveredAfterMs = performance.now() - restartedAt;
    const orphans = pg.query<{ id: string }>(
      `select e.id from events e join webhook_endpoints w on w.id = '${endpoint.id}'
        where e.created_at >= w.created_at and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)`,
    );
    expect(orphans).toEqual([]);
    expect(receiver.received.filter((r) => !r.verified).map((r) => r.id)).toEqual([]);
    const createdEmails = new Set(
      receiver.received
        .filter((r) => r.type === 'user.created')
        .map((r) => String((JSON.parse(r.body) as { data: { email: string } }).data.email)),
    );
    expect(acknowledged.filter((email) => !createdEmails.has(email))).toEqual([]);
    const counts = receiver.counts();
    const duplicates = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
    for (const id of duplicates) {
      const bodies = new Set(receiver.received.filter((r) => r.id === id).map((r) => r.body));
      expect(bodies.size).toBe(1);
    }
    expect(duplicates.length).toBeGreaterThan(0);
    expect(unexpected).toEqual([]);

    const figures = {
      usersAcknowledged: acknowledged.length,
      deliveries: deliveries.length,
      receivedAtCrash,
      leasedAtCrash: atCrash?.leased,
      pendingAtCrash: atCrash?.pending,
      unfannedAtCrash: atCrash?.unfanned,
      receivedTwice: duplicates.length,
      restartMs: Math.round(restartMs),
      allDeliveredAfterRestartMs: Math.round(redeliveredAfterMs),
      rotationsBeforeCrash: families.reduce((n, f) => n + f.used.length, 0),
      familiesInSync: inSync,
      familiesCutOff: cutOff,
    };
    process.stdout.write(`crash: ${JSON.stringify(figures)}\n`);
  });
});
