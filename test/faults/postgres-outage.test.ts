import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  AppProcess,
  OWNER_EMAIL,
  OWNER_PASSWORD,
  PgCluster,
  dig,
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
 * PostgreSQL stopped with `pg_ctl stop -m immediate` (every backend killed, as in a crash) under a
 * steady write load, then started again, with the app left running.
 */
interface Write {
  email: string;
  reply: Reply;
  /** Where the outage stood when the request left and when its answer came. */
  sent: Phase;
  answered: Phase;
}

type Phase = 'before' | 'outage' | 'after';

describe('PostgreSQL stopped and restarted', () => {
  let pg: PgCluster;
  let app: AppProcess;

  beforeAll(async () => {
    pg = await PgCluster.create();
    app = await AppProcess.start({ databaseUrl: pg.url });
  });

  afterAll(async () => {
    await app?.kill('SIGTERM');
    pg?.destroy();
  });

  it('answers a fast 503 in the envelope, acknowledges only committed writes, and reconnects without a restart', async () => {
    const pid = app.pid;
    const [workspace] = pg.query<{ id: string }>('select id from workspaces');
    const tenant = workspace?.id as string;
    const stem = randomUUID().slice(0, 8);
    const writes: Write[] = [];
    let phase: Phase = 'before';

    const ips = [freshIp(), freshIp(), freshIp(), freshIp()];
    const writers = loop(4, async (worker, round) => {
      const email = `w${worker}-${round}-${stem}@faults.test`;
      const sent = phase;
      const reply = await request(app.url, 'POST', '/api/v1/users', {
        token: API_KEY,
        ip: ips[worker],
        body: { email, password: 'a long enough password' },
      });
      writes.push({ email, reply, sent, answered: phase });
      if (reply.status === 0) await sleep(50);
    });

    await waitFor('writes before the outage', async () => (writes.filter((w) => w.reply.status === 201).length >= 12 ? true : undefined));
    pg.stopImmediate();
    phase = 'outage';
    const stoppedAt = performance.now();

    // During the outage: reads, a sign-in, a refresh and readiness answer 503 too, fast.
    await sleep(300);
    const probeIp = freshIp();
    const probes = {
      read: await request(app.url, 'GET', '/api/v1/users?per_page=5', { token: API_KEY, ip: probeIp }),
      signIn: await request(app.url, 'POST', '/api/v1/auth/login', {
        ip: probeIp,
        tenant,
        body: { email: OWNER_EMAIL, password: OWNER_PASSWORD },
      }),
      refresh: await request(app.url, 'POST', '/api/v1/auth/refresh', { ip: probeIp, body: { refresh_token: 'rt_unknown' } }),
      trpc: await request(app.url, 'GET', '/trpc/users.list?input=%7B%7D', { token: API_KEY, ip: probeIp }),
      graphql: await request(app.url, 'POST', '/graphql', { token: API_KEY, ip: probeIp, body: { query: '{ users { meta { total } } }' } }),
      ready: await request(app.url, 'GET', '/readyz'),
    };
    await sleep(Math.max(0, 3_000 - (performance.now() - stoppedAt)));

    await pg.start();
    phase = 'after';
    const restartedAt = performance.now();
    const recovered = await waitFor(
      'a write to succeed after the restart',
      async () => writes.find((w) => w.sent === 'after' && w.reply.status === 201),
      20_000,
      50,
    );
    const recoveryMs = performance.now() - restartedAt;
    await sleep(1_000);
    await writers.stop();

    // Outage answers: 503 UNAVAILABLE in the envelope, with a request id and Retry-After, well under 2 s.
    for (const reply of [probes.read, probes.signIn, probes.refresh]) {
      expect(reply.status, `${JSON.stringify(reply.body)}\n${app.linesAbout(reply.headers.get('x-request-id'))}`).toBe(503);
      expect(errorCode(reply)).toBe('UNAVAILABLE');
      expect(dig(reply.body, 'meta.request_id')).toBe(reply.headers.get('x-request-id'));
      expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    expect(probes.trpc.status).toBe(503);
    expect(dig(probes.trpc.body, 'error.data.appCode')).toBe('UNAVAILABLE');
    expect(dig(probes.graphql.body, 'errors.0.extensions.code')).toBe('UNAVAILABLE');
    expect(probes.ready.status).toBe(503);
    expect(errorCode(probes.ready)).toBe('UNAVAILABLE');

    const duringOutage = writes.filter((w) => w.sent === 'outage' && w.answered === 'outage');
    expect(duringOutage.length).toBeGreaterThan(10);
    // An unexpected answer is explained by the app's log lines about it; give them time to arrive.
    if (writes.some((w) => w.reply.status !== 201 && w.reply.status !== 503)) await sleep(1000);
    for (const w of writes.filter((x) => x.reply.status !== 201)) {
      const why = `${w.email}: ${JSON.stringify(w.reply.body)} ${w.reply.error ?? ''}\n${app.linesAbout(w.reply.headers.get('x-request-id'))}`;
      expect(w.reply.status, why).toBe(503);
      expect(errorCode(w.reply)).toBe('UNAVAILABLE');
    }
    const outageLatencies = writes.filter((w) => w.sent === 'outage' || w.answered === 'outage').map((w) => w.reply.ms);
    const slowest = Math.max(...outageLatencies, ...Object.values(probes).map((p) => p.ms));
    expect(slowest).toBeLessThan(2_000);

    // Every acknowledged write is there, with its audit row (same transaction); a failed one may or
    // may not have committed (its COMMIT can have been cut off), but never answered 2xx without one.
    const acked = writes.filter((w) => w.reply.status === 201);
    const stored = new Set(
      pg.query<{ email: string }>(`select email from users where email like '%-${stem}@faults.test'`).map((r) => r.email),
    );
    const missing = acked.filter((w) => !stored.has(w.email));
    expect(missing.map((w) => w.email)).toEqual([]);
    for (const w of acked) expect(text(w.reply, 'data.email')).toBe(w.email);
    const unaudited = pg.query<{ id: string }>(
      `select u.id from users u where u.email like '%-${stem}@faults.test'
          and not exists (select 1 from audit_events a where a.target_id = u.id and a.event_type = 'user.create')`,
    );
    expect(unaudited).toEqual([]);
    const failedButCommitted = writes.filter((w) => w.reply.status !== 201 && stored.has(w.email)).length;

    // The same process, its pool reconnected.
    expect(app.alive).toBe(true);
    expect(app.pid).toBe(pid);
    const ready = await request(app.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    const signIn = await request(app.url, 'POST', '/api/v1/auth/login', {
      ip: freshIp(),
      tenant,
      body: { email: OWNER_EMAIL, password: OWNER_PASSWORD },
    });
    expect(signIn.status).toBe(200);

    const figures = {
      writes: writes.length,
      acknowledged: acked.length,
      outageAnswers: duringOutage.length,
      failedButCommitted,
      outageP50Ms: Math.round(percentile(outageLatencies, 0.5)),
      outageMaxMs: Math.round(slowest),
      recoveryMs: Math.round(recoveryMs),
      firstWriteAfterRestartMs: Math.round(recovered.reply.ms),
    };
    process.stdout.write(`postgres outage: ${JSON.stringify(figures)}\n`);
  });
});
