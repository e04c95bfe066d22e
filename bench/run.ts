import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.ts';
import { BENCH_PASSWORD, seed, seedAudit, type SeededAudit } from './seed.ts';
import { serverEnv, startProcess, stopProcess } from './processes.ts';

/**
 * `npm run bench`: seeds a workspace (100,000 users, refresh tokens) and one with 1,000,000 audit
 * events (BENCH_AUDIT_EVENTS; reused by later runs), starts the real server in its
 * own process (on DATABASE_URL/REDIS_URL when set, embedded otherwise), loads it with autocannon from
 * this process and writes bench/results.md. Each request comes from another X-Forwarded-For address
 * (TRUST_PROXY=loopback), as real traffic would, so per-IP limits are exercised but not hit.
 * Ceilings measured in the same run: a bare Node HTTP server, a bare Express 5 server, and the raw
 * Argon2id verify rate with the service's parameters (the most sign-ins per second the CPU allows).
 * The single-user reads and the sign-ins, whose ratios have targets, run BENCH_ROUNDS times
 * interleaved with their ceiling (`interleaved`).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ONLY = process.env.BENCH_ONLY?.split(',');
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const REFRESH_TOKENS = Number(process.env.BENCH_REFRESH_TOKENS ?? 60_000);
const AUDIT_EVENTS = Number(process.env.BENCH_AUDIT_EVENTS ?? 1_000_000);
/** Rounds of the scenarios with a target ratio, each round followed by a run of their ceiling. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** BENCH_PORT moves the service (and the bare servers, on the next port) off 3901, for runs side by side. */
const PORT_APP = Number(process.env.BENCH_PORT ?? 3901);
const PORT_BARE = PORT_APP + 1;

interface Row {
  name: string;
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  ceiling?: string;
}

let ipCounter = 0;
function nextIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

type RequestShape = { method?: 'GET' | 'POST'; path?: string; headers?: Record<string, string>; body?: string };

async function load(name: string, url: string, next: () => RequestShape, ceiling?: string, connections = CONNECTIONS): Promise<Row> {
  const options = {
    url,
    connections,
    duration: DURATION,
    requests: [
      {
        setupRequest: (req: autocannon.Request) => {
          const shape = next();
          return {
            ...req,
            method: shape.method ?? 'GET',
            ...(shape.path ? { path: shape.path } : {}),
            headers: { 'x-forwarded-for': nextIp(), ...(shape.body ? { 'content-type': 'application/json' } : {}), ...shape.headers },
            ...(shape.body ? { body: shape.body } : {}),
          };
        },
      },
    ],
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: JIT, pools, caches
  const result = await autocannon(options);
  const row = {
    name,
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
    ceiling,
  };
  process.stdout.write(`${name}: ${Math.round(row.requests)} req/s, p50 ${row.p50} ms, p99 ${row.p99} ms, non-2xx ${row.non2xx}\n`);
  return row;
}

/** Argon2id verifies per second with the service's parameters, measured in a process of its own (bench/argon2-ceiling.ts). */
async function argon2Rate(): Promise<Row> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/argon2-ceiling.ts'], {
    env: { ...process.env, UV_THREADPOOL_SIZE: String(cpus().length) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the Argon2id ceiling exited with ${code}`);
  const measured = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { rate: number; p50: number; p99: number };
  const row = { name: 'Argon2id verify, raw (sign-in ceiling)', requests: measured.rate, p50: measured.p50, p99: measured.p99, non2xx: 0 };
  process.stdout.write(`${row.name}: ${Math.round(row.requests)} /s\n`);
  return row;
}

/**
 * A ceiling and the scenarios it bounds, interleaved (the service idle while the ceiling is measured):
 * ceiling, scenarios, ceiling, … , ceiling, for BENCH_ROUNDS rounds. Every row is the mean of its runs.
 * This machine's speed drifts by a fifth within minutes; a ceiling taken at another moment than its
 * scenarios skewed their ratio either way, and one run of each was a coin toss.
 */
async function interleaved(
  ceilingName: string,
  ceiling: (() => Promise<Row>) | null,
  scenarios: (() => Promise<Row>)[],
): Promise<{ ceiling: Row | null; rows: Row[] }> {
  const rounds = ceiling ? ROUNDS : 1;
  const ceilingRuns = ceiling ? [await ceiling()] : [];
  const runs: Row[][] = scenarios.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [i, scenario] of scenarios.entries()) runs[i]?.push(await scenario());
    if (ceiling) ceilingRuns.push(await ceiling());
  }
  return { ceiling: ceilingRuns.length > 0 ? meanOf(ceilingName, ceilingRuns) : null, rows: runs.map((r) => meanOf(null, r)) };
}

/** One row from several runs of a measurement: the mean of each figure. */
function meanOf(name: string | null, runs: Row[]): Row {
  const first = runs[0] as Row;
  const mean = (pick: (row: Row) => number) => runs.reduce((sum, row) => sum + pick(row), 0) / runs.length;
  return {
    ...first,
    name: name ?? first.name,
    requests: mean((r) => r.requests),
    p50: Math.round(mean((r) => r.p50)),
    p99: Math.round(mean((r) => r.p99)),
    non2xx: runs.reduce((sum, row) => sum + row.non2xx, 0),
  };
}

/** A bare server's rate: the server started in its own process, loaded, stopped. */
async function bareRate(script: string, label: string): Promise<Row> {
  const bare = await startProcess(['--import', 'tsx', script], { PORT: String(PORT_BARE) });
  try {
    return await load(label, `http://127.0.0.1:${PORT_BARE}/`, () => ({}));
  } finally {
    await stopProcess(bare);
  }
}

const wanted = (key: string) => !ONLY || ONLY.includes(key);

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'identity-bench-'));
  const env = serverEnv(PORT_APP, dataDir);
  const config = loadConfig({ ...process.env, ...env });
  const database = config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite';
  const redis = config.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process';
  process.stdout.write(`seeding ${USERS} users and ${REFRESH_TOKENS} refresh tokens on ${database}…\n`);
  const seeded = await seed(config, USERS, REFRESH_TOKENS);
  let audit: SeededAudit | undefined;
  if (wanted('audit')) {
    process.stdout.write(`seeding ${AUDIT_EVENTS} audit events…\n`);
    const started = Date.now();
    audit = await seedAudit(config, AUDIT_EVENTS);
    process.stdout.write(`audit events ready in ${Math.round((Date.now() - started) / 1000)} s\n`);
  }
  /** The ceilings (first in the table), then the service's scenarios. */
  const ceilings: Row[] = [];
  const rows: Row[] = [];

  if (wanted('node')) ceilings.push(await bareRate('bench/bare-server.ts', 'bare Node HTTP server (ceiling)'));
  // With the sign-in scenario, the Argon2id ceiling is measured interleaved with it instead.
  if (wanted('argon2') && !wanted('login')) ceilings.push(await argon2Rate());

  // BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the server while it is loaded.
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const app = await startProcess([...nodeArgs, '--import', 'tsx', 'src/main.ts'], env);
  const base = `http://127.0.0.1:${PORT_APP}`;
  try {
    const key = { authorization: `Bearer ${seeded.apiKey}` };
    const signedIn = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': seeded.workspaceId },
      body: JSON.stringify({ email: seeded.ownerEmail, password: BENCH_PASSWORD }),
    });
    if (signedIn.status !== 200) throw new Error(`sign-in probe answered ${signedIn.status}: ${await signedIn.text()}`);
    const bearer = { authorization: `Bearer ${((await signedIn.json()) as { data: { access_token: string } }).data.access_token}` };

    // The single-user reads, interleaved with the bare Express ceiling that bounds them.
    const reads: (() => Promise<Row>)[] = [];
    if (wanted('get-key')) {
      reads.push(() =>
        load('GET /api/v1/users/{id} (API key)', `${base}/api/v1/users/${seeded.userId}`, () => ({ headers: key }), 'bare Express 5'),
      );
    }
    if (wanted('get-token')) {
      reads.push(() =>
        load(
          'GET /api/v1/users/{id} (access token + live session check)',
          `${base}/api/v1/users/${seeded.userId}`,
          () => ({ headers: bearer }),
          'bare Express 5',
        ),
      );
    }
    const measured = await interleaved(
      `bare Express 5 server (ceiling: mean of ${ROUNDS + 1} runs interleaved with the single-user reads)`,
      wanted('express') ? () => bareRate('bench/bare-express.ts', 'bare Express 5 server (ceiling)') : null,
      reads,
    );
    if (measured.ceiling) ceilings.push(measured.ceiling);
    rows.push(...measured.rows);
    if (wanted('list')) {
      rows.push(
        await load(
          `GET /api/v1/users?per_page=20 (${USERS} users)`,
          `${base}/api/v1/users?per_page=20`,
          () => ({ headers: key }),
          'bare Express 5',
        ),
      );
      rows.push(
        await load(
          `GET /api/v1/users?per_page=20 (${USERS} users), 1 connection`,
          `${base}/api/v1/users?per_page=20`,
          () => ({ headers: key }),
          undefined,
          1,
        ),
      );
    }
    if (wanted('list-pages')) {
      // A status filter in turn (every seeded user is active, so `locked` and `deactivated` match none),
      // and any page of the whole list (the offset runs up to the last page).
      let i = 0;
      const statuses = ['active', 'locked', 'deactivated'];
      const byStatus = () => ({ headers: key, path: `/api/v1/users?per_page=20&status=${statuses[i++ % statuses.length]}` });
      const pages = Math.ceil(USERS / 20);
      const anyPage = () => ({ headers: key, path: `/api/v1/users?per_page=20&page=${1 + ((i++ * 7919) % pages)}` });
      const statusLabel = `GET /api/v1/users?status=…&per_page=20 (${USERS} users)`;
      const pageLabel = `GET /api/v1/users?page=…&per_page=20 (${USERS} users, pages 1 to ${pages})`;
      rows.push(await load(statusLabel, `${base}/api/v1/users`, byStatus, 'bare Express 5'));
      rows.push(await load(`${statusLabel}, 1 connection`, `${base}/api/v1/users`, byStatus, undefined, 1));
      rows.push(await load(pageLabel, `${base}/api/v1/users`, anyPage, 'bare Express 5'));
      rows.push(await load(`${pageLabel}, 1 connection`, `${base}/api/v1/users`, anyPage, undefined, 1));
    }
    if (wanted('search')) {
      let i = 0;
      const search = () => ({ headers: key, path: `/api/v1/users?per_page=20&q=user${(i++ * 7919) % USERS}%40` });
      rows.push(await load(`GET /api/v1/users?q=…&per_page=20 (${USERS} users)`, `${base}/api/v1/users`, search, 'bare Express 5'));
      // The latency one admin sees while typing into the search box: one client, no queue in front of it.
      rows.push(
        await load(`GET /api/v1/users?q=…&per_page=20 (${USERS} users), 1 connection`, `${base}/api/v1/users`, search, undefined, 1),
      );
    }
    if (audit) {
      const { apiKey, actorIds, targetIds, newest } = audit;
      const day = 86_400_000;
      const at = (msAgo: number) => encodeURIComponent(new Date(newest.getTime() - msAgo).toISOString());
      // The filters an admin combines, in turn: type and outcome, outcome alone, one actor, one target,
      // a day's range, a type over a week, and no filter at all (the newest page of a million).
      let i = 0;
      const filters = [
        () => 'event_type=auth.login&outcome=failure',
        () => 'event_type=user.update',
        () => 'outcome=failure',
        () => `actor_id=${actorIds[i % actorIds.length]}`,
        () => `target_id=${targetIds[i % targetIds.length]}`,
        () => `since=${at(((i % 20) + 2) * day)}&until=${at(((i % 20) + 1) * day)}`,
        () => `event_type=role.assign&since=${at(7 * day)}`,
        () => '',
      ];
      const filtered = () => {
        i += 1;
        return {
          headers: { authorization: `Bearer ${apiKey}` },
          path: `/api/v1/audit/events/?per_page=20&${(filters[i % filters.length] as () => string)()}`,
        };
      };
      const label = `GET /api/v1/audit/events/ filtered (${AUDIT_EVENTS} events)`;
      rows.push(await load(label, `${base}/api/v1/audit/events/`, filtered, 'bare Express 5'));
      // The latency one admin sees while filtering the log: one client, no queue in front of it.
      rows.push(await load(`${label}, 1 connection`, `${base}/api/v1/audit/events/`, filtered, undefined, 1));
    }
    if (wanted('refresh')) {
      let i = 0;
      rows.push(
        await load(
          'POST /api/v1/auth/refresh (rotation)',
          `${base}/api/v1/auth/refresh`,
          () => ({ method: 'POST', body: JSON.stringify({ refresh_token: seeded.refreshTokens[i++ % seeded.refreshTokens.length] }) }),
          'bare Express 5',
        ),
      );
    }
    if (wanted('client-credentials')) {
      const created = await fetch(`${base}/api/v1/applications`, {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bench backend', type: 'm2m' }),
      });
      if (created.status !== 201) throw new Error(`application create answered ${created.status}: ${await created.text()}`);
      const backend = ((await created.json()) as { data: { id: string; client_secret: string } }).data;
      const basic = `Basic ${Buffer.from(`${backend.id}:${backend.client_secret}`).toString('base64')}`;
      rows.push(
        await load(
          'POST /oauth/token (client_credentials)',
          `${base}/oauth/token`,
          () => ({
            method: 'POST',
            headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
            body: 'grant_type=client_credentials',
          }),
          'bare Express 5',
        ),
      );
    }
    if (wanted('login')) {
      let i = 0;
      const signIns = await interleaved(
        `Argon2id verify, raw (sign-in ceiling: mean of ${ROUNDS + 1} runs interleaved with the sign-ins)`,
        argon2Rate,
        [
          () =>
            load(
              'POST /api/v1/auth/login (Argon2id)',
              `${base}/api/v1/auth/login`,
              () => ({
                method: 'POST',
                headers: { 'x-tenant-id': seeded.workspaceId },
                body: JSON.stringify({ email: seeded.emails[i++ % seeded.emails.length], password: BENCH_PASSWORD }),
              }),
              'Argon2id verify',
            ),
        ],
      );
      if (signIns.ceiling) ceilings.push(signIns.ceiling);
      rows.push(...signIns.rows);
    }
  } finally {
    await stopProcess(app);
    await rm(dataDir, { recursive: true, force: true });
  }

  const ceilingOf = (label: string | undefined) =>
    label === 'Argon2id verify'
      ? ceilings.find((r) => r.name.startsWith('Argon2id'))
      : ceilings.find((r) => r.name.startsWith('bare Express'));
  const table = [
    '| scenario | req/s | p50 ms | p99 ms | non-2xx | of its ceiling |',
    '|---|---:|---:|---:|---:|---:|',
    ...[...ceilings, ...rows].map((r) => {
      const ceiling = r.ceiling ? ceilingOf(r.ceiling) : undefined;
      const ratio = ceiling ? `${((r.requests / ceiling.requests) * 100).toFixed(1)}% of ${r.ceiling}` : '';
      return `| ${r.name} | ${Math.round(r.requests)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${ratio} |`;
    }),
  ];
  const report = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version},`,
    `database ${database}, rate-limit state ${redis}; ${CONNECTIONS} connections, ${DURATION} s per scenario after a 2 s warm-up;`,
    'server, database, Redis and load generator share the machine. The single-user reads and the sign-ins are each the mean of',
    `${ROUNDS} runs interleaved with ${ROUNDS + 1} runs of their ceiling (the machine's speed drifts within minutes).`,
    '',
    ...table,
    '',
  ].join('\n');
  if (!ONLY) await writeFile('bench/results.md', report);
  process.stdout.write(`\n${table.join('\n')}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
