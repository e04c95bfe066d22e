import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { Webhook } from 'standardwebhooks';

/**
 * `npm run soak` (not in CI): the real server in its own process (on DATABASE_URL / REDIS_URL when
 * set, embedded otherwise) under a steady mixed load for SOAK_MINUTES (10) after a warm-up
 * (SOAK_WARMUP_SECONDS, 60): reads, refresh-token rotation, sign-ins, user creation, and the webhook
 * deliveries all of these cause, sent to a receiver in this process. The server's RSS is sampled every
 * 10 s; bench/soak-results.md gets RSS after the warm-up and at the end, its growth, the requests and
 * the error rate. Targets: RSS growth under 10%, no errors.
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const WARMUP_SECONDS = Number(process.env.SOAK_WARMUP_SECONDS ?? 60);
const PORT = Number(process.env.SOAK_PORT ?? 3911);
const SAMPLE_MS = 10_000;
const PASSWORD = 'soak test password';
const PLATFORM_TOKEN = randomBytes(24).toString('hex');

/** Requests per second of each part of the mix, and the connections that carry them. */
const MIX = {
  reads: { rate: 80, connections: 4 },
  refresh: { rate: 20, connections: 4 },
  signIn: { rate: 3, connections: 2 },
  createUser: { rate: 2, connections: 1 },
} as const;
type Part = keyof typeof MIX;

interface Tally {
  requests: number;
  non2xx: number;
  errors: number;
  statuses: Map<number, number>;
}

const newTally = (): Tally => ({ requests: 0, non2xx: 0, errors: 0, statuses: new Map() });

let ipCounter = 0;
/** Each request from another client address (TRUST_PROXY=loopback), as real traffic: limits never bite. */
function nextIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; tail: () => string }> {
  // SOAK_NODE_ARGS="--heapsnapshot-signal=SIGUSR2" lets one take heap snapshots of the loaded server.
  const nodeArgs = process.env.SOAK_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const deadline = Date.now() + 90_000;
  while (!out.includes('"msg":"listening"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not start:\n${out}`);
    }
    await sleep(100);
  }
  return { child, tail: () => out };
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kb) * 1024;
}

interface Json {
  status: number;
  body: Record<string, unknown>;
}

async function api(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; tenant?: string; body?: unknown } = {},
): Promise<Json> {
  const headers: Record<string, string> = { 'x-forwarded-for': nextIp() };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.tenant) headers['x-tenant-id'] = opts.tenant;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function field(answer: Json, ...path: string[]): string {
  let value: unknown = answer.body;
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  if (typeof value !== 'string') throw new Error(`no ${path.join('.')} in ${answer.status} ${JSON.stringify(answer.body)}`);
  return value;
}

/** Counts and verifies the deliveries; answers 204 like a healthy receiver. */
class Receiver {
  received = 0;
  badSignatures = 0;
  secret = '';
  private server: Server | null = null;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received += 1;
        try {
          new Webhook(this.secret).verify(Buffer.concat(chunks).toString('utf8'), {
            'webhook-id': String(req.headers['webhook-id']),
            'webhook-timestamp': String(req.headers['webhook-timestamp']),
            'webhook-signature': String(req.headers['webhook-signature']),
          });
        } catch (error) {
          this.badSignatures += 1;
          process.stderr.write(`webhook failed verification: ${String(error)}\n`);
        }
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

async function main(): Promise<void> {
  const runId = randomUUID().slice(0, 8);
  const dataDir = await mkdtemp(join(tmpdir(), 'identity-soak-'));
  const base = `http://127.0.0.1:${PORT}`;
  const totalSeconds = WARMUP_SECONDS + MINUTES * 60;
  const env = {
    DATA_DIR: dataDir,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    BASE_URL: base,
    LOG_LEVEL: 'info',
    NODE_ENV: 'test',
    TRUST_PROXY: 'loopback',
    PLATFORM_API_TOKEN: PLATFORM_TOKEN,
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    RATE_LIMIT_PREFIX: `soak:${runId}`,
    // The readers keep one access token for the whole run.
    ACCESS_TOKEN_TTL: String(Math.max(900, totalSeconds + 600)),
    // Fixed, so a later run on the same database can open the signing keys this one sealed.
    VAULT_MASTER_KEY: process.env.VAULT_MASTER_KEY ?? Buffer.alloc(32, 42).toString('base64'),
  };
  const database = process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite';
  const redis = process.env.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process';
  process.stdout.write(`soak: ${MINUTES} min after a ${WARMUP_SECONDS} s warm-up, on ${database}, rate limits ${redis}\n`);
  const server = await startServer(env);
  const pid = server.child.pid as number;
  const receiver = new Receiver();

  try {
    // A workspace of its own, a webhook endpoint for every event type, and the users the load needs.
    const workspace = await api(base, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: `Soak ${runId}`, owner: { email: `owner-${runId}@soak.test`, password: PASSWORD } },
    });
    const tenant = field(workspace, 'data', 'workspace', 'id');
    const apiKey = field(workspace, 'data', 'api_key');
    const endpoint = await api(base, 'POST', '/api/v1/webhooks/', {
      token: apiKey,
      body: { url: await receiver.start(), event_types: [] },
    });
    receiver.secret = field(endpoint, 'data', 'secret');
    const endpointId = field(endpoint, 'data', 'id');
    const createUser = async (label: string) => {
      const email = `${label}-${runId}@soak.test`;
      const created = await api(base, 'POST', '/api/v1/users', { token: apiKey, body: { email, password: PASSWORD } });
      return { id: field(created, 'data', 'id'), email };
    };
    const signIn = async (email: string) => {
      const answer = await api(base, 'POST', '/api/v1/auth/login', { tenant, body: { email, password: PASSWORD } });
      return { access: field(answer, 'data', 'access_token'), refresh: field(answer, 'data', 'refresh_token') };
    };
    const signInUsers = await Promise.all(Array.from({ length: 10 }, (_, i) => createUser(`signin${i}`)));
    const reader = await createUser('reader');
    const readerToken = (await signIn(reader.email)).access;
    const families: string[] = [];
    for (let i = 0; i < MIX.refresh.connections * 3; i += 1) families.push((await signIn((await createUser(`family${i}`)).email)).refresh);

    // Management reads with the API key, a user's own reads with their access token.
    const READS: [string, string][] = [
      [`/api/v1/users/${reader.id}`, apiKey],
      ['/api/v1/users?per_page=20', apiKey],
      ['/api/v1/auth/sessions', readerToken],
      ['/api/v1/mfa/factors', readerToken],
    ];
    let created = 0;
    let signInTurn = 0;
    let readTurn = 0;
    const requests: Record<Part, autocannon.Request> = {
      reads: {
        setupRequest: (req) => {
          readTurn += 1;
          const [path, token] = READS[readTurn % READS.length] as [string, string];
          return { ...req, method: 'GET', path, headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': nextIp() } };
        },
      },
      refresh: {
        // autocannon clears a connection's context after each request, so the families wait in one
        // pool: a request takes a token, its answer puts the rotated one back.
        setupRequest: (req) => ({
          ...req,
          method: 'POST',
          path: '/api/v1/auth/refresh',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': nextIp() },
          body: JSON.stringify({ refresh_token: families.shift() }),
        }),
        onResponse: (status, body) => {
          if (status === 200) families.push((JSON.parse(body) as { data: { refresh_token: string } }).data.refresh_token);
        },
      },
      signIn: {
        setupRequest: (req) => {
          signInTurn += 1;
          const user = signInUsers[signInTurn % signInUsers.length] as { email: string };
          return {
            ...req,
            method: 'POST',
            path: '/api/v1/auth/login',
            headers: { 'content-type': 'application/json', 'x-tenant-id': tenant, 'x-forwarded-for': nextIp() },
            body: JSON.stringify({ email: user.email, password: PASSWORD }),
          };
        },
      },
      createUser: {
        setupRequest: (req) => {
          created += 1;
          return {
            ...req,
            method: 'POST',
            path: '/api/v1/users',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'x-forwarded-for': nextIp() },
            body: JSON.stringify({ email: `new${created}-${runId}@soak.test`, password: PASSWORD }),
          };
        },
      },
    };

    const startedAt = Date.now();
    const measureFrom = startedAt + WARMUP_SECONDS * 1000;
    const tallies = Object.fromEntries(Object.keys(MIX).map((part) => [part, newTally()])) as Record<Part, Tally>;
    const samples: { seconds: number; rss: number }[] = [];
    const sampler = setInterval(() => {
      void rssBytes(pid).then((rss) => {
        const seconds = Math.round((Date.now() - measureFrom) / 1000);
        samples.push({ seconds, rss });
        const requestsSoFar = Object.values(tallies).reduce((n, t) => n + t.requests, 0);
        const failures = Object.values(tallies).reduce((n, t) => n + t.non2xx + t.errors, 0);
        process.stdout.write(
          `${seconds < 0 ? 'warm-up' : `t=${seconds}s`}: RSS ${mb(rss)} MB, ${requestsSoFar} requests measured, ${failures} failed\n`,
        );
      });
    }, SAMPLE_MS);

    const results = await Promise.all(
      (Object.keys(MIX) as Part[]).map(
        (part) =>
          new Promise<autocannon.Result>((resolve, reject) => {
            const instance = autocannon(
              {
                url: base,
                connections: MIX[part].connections,
                overallRate: MIX[part].rate,
                duration: totalSeconds,
                requests: [requests[part]],
              },
              (error: unknown, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
            );
            instance.on('response', (_client, status) => {
              if (Date.now() < measureFrom) return;
              const tally = tallies[part];
              tally.requests += 1;
              tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
              if (status < 200 || status >= 300) tally.non2xx += 1;
            });
            instance.on('reqError', () => {
              if (Date.now() < measureFrom) return;
              tallies[part].requests += 1;
              tallies[part].errors += 1;
            });
          }),
      ),
    );
    clearInterval(sampler);

    // Let the dispatcher catch up, then count deliveries by status.
    let pending = -1;
    for (let i = 0; i < 30 && pending !== 0; i += 1) {
      const answer = await api(base, 'GET', `/api/v1/webhooks/${endpointId}/deliveries?status=pending&per_page=1`, { token: apiKey });
      pending = Number((answer.body.meta as { total: number }).total);
      if (pending !== 0) await sleep(1_000);
    }
    const failedAnswer = await api(base, 'GET', `/api/v1/webhooks/${endpointId}/deliveries?status=failed&per_page=1`, { token: apiKey });
    const failedDeliveries = Number((failedAnswer.body.meta as { total: number }).total);

    const measured = samples.filter((s) => s.seconds >= 0);
    const rssStart = median(measured.slice(0, 3).map((s) => s.rss));
    const rssEnd = median(measured.slice(-3).map((s) => s.rss));
    const growth = ((rssEnd - rssStart) / rssStart) * 100;
    const totals = Object.values(tallies).reduce(
      (sum, t) => ({ requests: sum.requests + t.requests, failures: sum.failures + t.non2xx + t.errors }),
      { requests: 0, failures: 0 },
    );
    const errorRate = totals.requests ? (totals.failures / totals.requests) * 100 : 0;
    const pass = growth < 10 && totals.failures === 0 && failedDeliveries === 0 && receiver.badSignatures === 0;

    const parts = (Object.keys(MIX) as Part[]).map((part, i) => {
      const t = tallies[part];
      const result = results[i] as autocannon.Result;
      const statuses = [...t.statuses].map(([status, n]) => `${status}×${n}`).join(', ');
      return `| ${part} | ${MIX[part].rate} | ${t.requests} | ${statuses} | ${t.errors} | ${result.latency.p50} | ${result.latency.p99} |`;
    });
    const report = [
      '# Soak results',
      '',
      `Written by \`npm run soak\` on ${new Date().toISOString()}: ${cpus().length} cores, Node ${process.version}, database ${database},`,
      `rate-limit state ${redis}; ${MINUTES} min measured after a ${WARMUP_SECONDS} s warm-up; server, database, Redis and load`,
      'generator share the machine.',
      '',
      `**${pass ? 'PASS' : 'FAIL'}** (targets: RSS growth < 10%, error rate 0, every webhook delivered)`,
      '',
      '| | |',
      '|---|---:|',
      `| RSS after warm-up | ${mb(rssStart)} MB |`,
      `| RSS at the end | ${mb(rssEnd)} MB |`,
      `| RSS growth | ${growth.toFixed(1)}% |`,
      `| RSS min / max while measured | ${mb(Math.min(...measured.map((s) => s.rss)))} / ${mb(Math.max(...measured.map((s) => s.rss)))} MB |`,
      `| requests (measured) | ${totals.requests} |`,
      `| failed (non-2xx or no answer) | ${totals.failures} |`,
      `| error rate | ${errorRate.toFixed(3)}% |`,
      `| webhook deliveries received | ${receiver.received} (failed: ${failedDeliveries}, bad signatures: ${receiver.badSignatures}) |`,
      '',
      'RSS is the median of the first three samples after the warm-up and of the last three.',
      '',
      '| part of the mix | req/s | requests | statuses | no answer | p50 ms | p99 ms |',
      '|---|---:|---:|---|---:|---:|---:|',
      ...parts,
      '',
      'reads: `GET /api/v1/users/{id}` and `GET /api/v1/users?per_page=20` (API key), `GET /api/v1/auth/sessions` and',
      "`GET /api/v1/mfa/factors` (access token) in turn; refresh: rotating families (each answer's token is used next);",
      'sign-in: ten users in turn; createUser: a new user each time; every sign-in and creation is a webhook delivery.',
      'Latencies cover the whole run, warm-up included.',
      '',
      '| t (s) | RSS (MB) |',
      '|---:|---:|',
      ...samples.map((s) => `| ${s.seconds} | ${mb(s.rss)} |`),
      '',
    ].join('\n');
    await writeFile('bench/soak-results.md', report);
    process.stdout.write(`\n${report}\n`);
    if (!pass) process.exitCode = 1;
  } catch (error) {
    process.stderr.write(`${server.tail()}\n`);
    throw error;
  } finally {
    await receiver.close();
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGTERM');
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
