import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint, sessionsCall, signIn, signedIn } from './flows.ts';
import {
  API_KEY,
  AppProcess,
  OWNER_EMAIL,
  OWNER_PASSWORD,
  PgCluster,
  RedisServer,
  SHARED_BASE_URL,
  WebhookReceiver,
  errorCode,
  freshIp,
  request,
  waitFor,
  type Reply,
} from './harness.ts';

/** Two instances behind one (imaginary) load balancer: the same PostgreSQL, Redis and public URL. */
describe('two app instances on the same PostgreSQL and Redis', () => {
  let pg: PgCluster;
  let redis: RedisServer;
  let a: AppProcess;
  let b: AppProcess;
  let tenant: string;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    pg = await PgCluster.create();
    redis = await RedisServer.start();
    const options = { databaseUrl: pg.url, redisUrl: redis.url, env: { BASE_URL: SHARED_BASE_URL } };
    a = await AppProcess.start(options);
    b = await AppProcess.start(options);
    tenant = pg.query<{ id: string }>('select id from workspaces')[0]?.id as string;
  });

  afterAll(async () => {
    await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    await receiver.close();
    await redis?.kill();
    pg?.destroy();
  });

  it('a session revoked on one instance is refused by the other at once', async () => {
    const loggedOut = await signedIn(a.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);
    const revoked = await signedIn(b.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);
    // B has seen and remembered both tokens (their signatures are cached once checked).
    for (const token of [loggedOut.access, revoked.access]) expect((await sessionsCall(b.url, token)).status).toBe(200);
    for (const token of [loggedOut.access, revoked.access]) expect((await sessionsCall(a.url, token)).status).toBe(200);

    expect((await request(a.url, 'POST', '/api/v1/auth/logout', { token: loggedOut.access, ip: freshIp() })).status).toBe(200);
    const refusedAtOnce = await sessionsCall(b.url, loggedOut.access);
    expect([refusedAtOnce.status, errorCode(refusedAtOnce)]).toEqual([401, 'INVALID_TOKEN']);

    const sid = String(decodeJwt(revoked.access).sid);
    expect((await request(b.url, 'DELETE', `/api/v1/auth/sessions/${sid}`, { token: loggedOut.access, ip: freshIp() })).status).toBe(401);
    const other = await signedIn(b.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);
    expect((await request(b.url, 'DELETE', `/api/v1/auth/sessions/${sid}`, { token: other.access, ip: freshIp() })).status).toBe(200);
    expect(errorCode(await sessionsCall(a.url, revoked.access))).toBe('INVALID_TOKEN');
    // Its refresh token is dead on both as well.
    for (const app of [a, b]) {
      const refresh = await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: freshIp(), body: { refresh_token: revoked.refresh } });
      expect(errorCode(refresh)).toBe('INVALID_TOKEN');
    }
  });

  it('counts the sign-in limit across both: 10 a minute per address, the 11th is 429 wherever it lands', async () => {
    const ip = freshIp();
    const replies: Reply[] = [];
    for (let i = 0; i < 10; i += 1)
      replies.push(await signIn(i % 2 === 0 ? a.url : b.url, tenant, 'nobody@faults.test', 'wrong password', ip));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(401));
    for (const app of [a, b]) {
      const over = await signIn(app.url, tenant, 'nobody@faults.test', 'wrong password', ip);
      expect([over.status, errorCode(over)]).toEqual([429, 'RATE_LIMITED']);
      expect(over.headers.get('ratelimit-limit')).toBe('10');
    }
  });

  it("counts the global limit across both; an instance learns the other's hits at its next 100 ms flush (batched by design)", async () => {
    const ip = freshIp();
    const burst = async (app: AppProcess, count: number) => {
      const statuses: number[] = [];
      for (let i = 0; i < count; i += 10) {
        const replies = await Promise.all(Array.from({ length: 10 }, () => request(app.url, 'GET', '/no-such-path', { ip })));
        statuses.push(...replies.map((r) => r.status));
      }
      return statuses;
    };
    expect(new Set([...(await burst(a, 500)), ...(await burst(b, 500))])).toEqual(new Set([404]));
    await sleep(300); // B has added its hits to the shared total and read it back (every 100 ms)
    const atB = await request(b.url, 'GET', '/no-such-path', { ip });
    expect([atB.status, errorCode(atB)]).toEqual([429, 'RATE_LIMITED']);
    // A last read the total before B's hits: it admits what reaches it before its next flush, then refuses.
    let overshoot = 0;
    const deadline = Date.now() + 1_000;
    for (;;) {
      const atA = await request(a.url, 'GET', '/no-such-path', { ip });
      if (atA.status === 429) break;
      expect(atA.status).toBe(404);
      overshoot += 1;
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(10);
    }
    expect(overshoot).toBeLessThanOrEqual(15);
    for (const app of [a, b]) expect((await request(app.url, 'GET', '/no-such-path', { ip })).status).toBe(429);
    process.stdout.write(`global limit: 1,000 split across two instances, then ${overshoot} more admitted by the stale one\n`);
  });

  it('sends each webhook delivery once although both dispatchers run', async () => {
    const endpoint = await createEndpoint(a.url, await receiver.start());
    receiver.secret = endpoint.secret;
    const stem = randomUUID().slice(0, 8);
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        request(i % 2 === 0 ? a.url : b.url, 'POST', '/api/v1/users', {
          token: API_KEY,
          ip: freshIp(),
          body: { email: `twin-${i}-${stem}@faults.test`, password: 'a long enough password' },
        }),
      ),
    );
    expect(created.map((r) => r.status)).toEqual(Array(30).fill(201));

    const deliveries = await waitFor(
      'every delivery to be recorded',
      async () => {
        const rows = pg.query<{ id: string; status: string; attempts: number }>(
          `select id, status, attempts from webhook_deliveries where endpoint_id = '${endpoint.id}'`,
        );
        return rows.length >= 30 && rows.every((r) => r.status === 'succeeded') ? rows : undefined;
      },
      30_000,
      100,
    );
    await sleep(1_500); // a second send, if one were coming, would have come by now
    const counts = receiver.counts();
    expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
    expect(new Set(counts.keys())).toEqual(new Set(deliveries.map((d) => d.id)));
    expect(deliveries.filter((d) => d.attempts !== 1)).toEqual([]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const attempts = pg.query<{ n: number }>(
      `select count(*)::int as n from webhook_attempts t join webhook_deliveries d on d.id = t.delivery_id where d.endpoint_id = '${endpoint.id}'`,
    )[0];
    expect(attempts?.n).toBe(deliveries.length);
    process.stdout.write(`two instances: ${JSON.stringify({ deliveries: deliveries.length, received: receiver.received.length })}\n`);
  });
});
