import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionsCall, signIn, signedIn, createUser, userWithTotp } from './flows.ts';
import {
  AppProcess,
  OWNER_EMAIL,
  OWNER_PASSWORD,
  PgCluster,
  RedisServer,
  SHARED_BASE_URL,
  errorCode,
  freshIp,
  loop,
  percentile,
  request,
  text,
  waitFor,
  type Reply,
} from './harness.ts';

/**
 * Redis killed (SIGKILL, no persistence: its counters are gone) while two instances serve a steady
 * sign-in load, then started again on the same port. Redis holds only what may be lost: limits fall
 * back to each instance's own count, revocations are PostgreSQL's, and nobody restarts anything.
 */
describe('Redis killed during sign-in load', () => {
  let pg: PgCluster;
  let redis: RedisServer;
  let a: AppProcess;
  let b: AppProcess;
  let tenant: string;

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
    await redis?.kill();
    pg?.destroy();
  });

  /** `count` failed sign-ins (an address nobody has) from one client address, alternating instances. */
  async function attempts(apps: AppProcess[], ip: string, count: number): Promise<Reply[]> {
    const replies: Reply[] = [];
    for (let i = 0; i < count; i += 1) {
      replies.push(await signIn((apps[i % apps.length] as AppProcess).url, tenant, 'nobody@faults.test', 'not the password', ip));
    }
    return replies;
  }

  it('limits still bite, revoked tokens stay revoked, and the limits are shared again once Redis is back', async () => {
    const pids = [a.pid, b.pid];
    const loadUser = await createUser(a.url, 'load');
    const mfaUser = await userWithTotp(a.url, tenant);
    const loggedOutBefore = await signedIn(a.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);
    expect((await request(a.url, 'POST', '/api/v1/auth/logout', { token: loggedOutBefore.access, ip: freshIp() })).status).toBe(200);
    const loggedOutDuring = await signedIn(b.url, tenant, OWNER_EMAIL, OWNER_PASSWORD);

    // Steady sign-in load on both instances, each from a new address (so no limit is in play).
    let redisDown = false;
    const load: { status: number; ms: number; duringOutage: boolean }[] = [];
    const signIns = loop(2, async (worker) => {
      const app = worker === 0 ? a : b;
      const duringOutage = redisDown;
      const reply = await signIn(app.url, tenant, loadUser.email);
      load.push({ status: reply.status, ms: reply.ms, duringOutage: duringOutage && redisDown });
    });
    await waitFor('sign-in load to run', async () => (load.length >= 6 ? true : undefined));

    await redis.kill();
    redisDown = true;
    const killedAt = performance.now();
    await sleep(200);

    // Sign-in: 10 a minute per address. With Redis gone the instance counts alone: the 11th is 429.
    const bruteIp = freshIp();
    const brute = await attempts([a], bruteIp, 12);
    expect(brute.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(401));
    expect(brute.slice(10).map((r) => [r.status, errorCode(r)])).toEqual([
      [429, 'RATE_LIMITED'],
      [429, 'RATE_LIMITED'],
    ]);
    expect(Number(brute[10]?.headers.get('retry-after'))).toBeGreaterThan(0);

    // Second factor: 5 attempts per 5 minutes per user, then 429, Redis or not.
    const challenge = await signIn(a.url, tenant, mfaUser.email);
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    const mfaToken = text(challenge, 'data.mfa_token');
    const codes: Reply[] = [];
    for (let i = 0; i < 6; i += 1) {
      codes.push(await request(a.url, 'POST', '/api/v1/auth/mfa/verify', { ip: freshIp(), body: { mfa_token: mfaToken, code: '000000' } }));
    }
    expect(codes.map((r) => errorCode(r))).toEqual([...Array(5).fill('INVALID_CODE'), 'RATE_LIMITED']);

    // Revocations are PostgreSQL's: a token logged out before the outage, and one logged out during it
    // on the other instance, are refused by both.
    const logout = await request(a.url, 'POST', '/api/v1/auth/logout', { token: loggedOutDuring.access, ip: freshIp() });
    expect(logout.status, `${JSON.stringify(logout.body)}\n${a.linesAbout(logout.headers.get('x-request-id'))}`).toBe(200);
    for (const app of [a, b]) {
      for (const token of [loggedOutBefore.access, loggedOutDuring.access]) {
        const refused = await sessionsCall(app.url, token);
        expect([refused.status, errorCode(refused)]).toEqual([401, 'INVALID_TOKEN']);
      }
    }
    const outageProbes = [...brute, ...codes, challenge];
    await sleep(Math.max(0, 2_000 - (performance.now() - killedAt)));

    // Back: both instances reconnect on their own and their limits are shared through Redis again.
    await redis.restart();
    const restartedAt = performance.now();
    redisDown = false;
    await waitFor(
      'both instances to report Redis reachable',
      async () => {
        const ready = await Promise.all([a, b].map((app) => request(app.url, 'GET', '/readyz')));
        return ready.every((r) => r.status === 200) ? true : undefined;
      },
      15_000,
      50,
    );
    const recoveryMs = performance.now() - restartedAt;
    await signIns.stop();

    const sharedIp = freshIp();
    const shared = await attempts([a, b], sharedIp, 10);
    expect(shared.map((r) => r.status)).toEqual(Array(10).fill(401));
    expect(redis.cli('GET', `rl:login:${sharedIp}`)).toBe('10');
    for (const app of [a, b]) {
      const over = await signIn(app.url, tenant, 'nobody@faults.test', 'not the password', sharedIp);
      expect([over.status, errorCode(over)]).toEqual([429, 'RATE_LIMITED']);
    }

    // The load never saw an error, during the outage either, and nothing restarted.
    const outageLoad = load.filter((l) => l.duringOutage);
    expect(outageLoad.length).toBeGreaterThan(0);
    expect(load.filter((l) => l.status !== 200)).toEqual([]);
    expect([a.pid, b.pid]).toEqual(pids);
    // One warning per instance for the outage, not one per command or per 100 ms flush.
    for (const app of [a, b]) {
      expect(app.logged('redis error')).toBe(1);
      expect(app.logged('rate-limit flush failed')).toBeLessThanOrEqual(1);
      expect(app.logged('redis reconnected')).toBe(1);
    }
    expect(a.alive && b.alive).toBe(true);
    const slowestProbe = Math.max(...outageProbes.map((r) => r.ms));
    expect(slowestProbe).toBeLessThan(2_000);

    const figures = {
      loadSignIns: load.length,
      loadDuringOutage: outageLoad.length,
      loadOutageP50Ms: Math.round(
        percentile(
          outageLoad.map((l) => l.ms),
          0.5,
        ),
      ),
      loadOutageMaxMs: Math.round(Math.max(...outageLoad.map((l) => l.ms))),
      outageProbeMaxMs: Math.round(slowestProbe),
      bruteForce: brute.map((r) => r.status).join(','),
      mfa: codes.map((r) => r.status).join(','),
      recoveryMs: Math.round(recoveryMs),
    };
    process.stdout.write(`redis outage: ${JSON.stringify(figures)}\n`);
  });
});
