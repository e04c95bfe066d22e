import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.ts';
import { seed } from './seed.ts';

/**
 * `npm run bench`: seeds a workspace with 10,000 users, starts the real server in its own process
 * (on DATABASE_URL/REDIS_URL when set, embedded otherwise), loads it with autocannon from this
 * process, and writes bench/results.md. Each request comes from a different X-Forwarded-For address
 * (TRUST_PROXY=loopback), as real traffic would, so the per-IP limit is exercised but not hit.
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const USERS = 10_000;
const PORT_APP = 3901;
const PORT_BARE = 3902;

interface Row {
  name: string;
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function startProcess(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('"msg":"listening"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`process did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

let ipCounter = 0;
function nextIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

async function load(name: string, url: string, headers: Record<string, string>): Promise<Row> {
  const options = {
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    headers,
    requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, headers: { ...headers, 'x-forwarded-for': nextIp() } }) }],
  };
  await autocannon({ ...options, duration: 2 }); // warm-up: JIT, pools, caches
  const result = await autocannon(options);
  process.stdout.write(`${name}: ${result.requests.average} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms\n`);
  return {
    name,
    requests: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + result.errors,
  };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'identity-bench-'));
  const env = {
    DATA_DIR: dataDir,
    PORT: String(PORT_APP),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    TRUST_PROXY: 'loopback',
    NODE_ENV: 'production',
    BASE_URL: '',
  };
  const config = loadConfig({ ...process.env, ...env });
  const database = config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite';
  const redis = config.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process';
  process.stdout.write(`seeding ${USERS} users on ${database}…\n`);
  const seeded = await seed(config, USERS);
  const rows: Row[] = [];

  const bare = await startProcess(['--import', 'tsx', 'bench/bare-server.ts'], { PORT: String(PORT_BARE) });
  try {
    rows.push(await load('bare Node HTTP server (ceiling)', `http://127.0.0.1:${PORT_BARE}/`, {}));
  } finally {
    await stopProcess(bare);
  }

  const app = await startProcess(['--import', 'tsx', 'src/main.ts'], env);
  try {
    const auth = { authorization: `Bearer ${seeded.apiKey}` };
    const probe = await fetch(`http://127.0.0.1:${PORT_APP}/api/v1/users/${seeded.userId}`, { headers: auth });
    if (probe.status !== 200) throw new Error(`probe answered ${probe.status}: ${await probe.text()}`);
    rows.push(await load('GET /api/v1/users/{id} (API key)', `http://127.0.0.1:${PORT_APP}/api/v1/users/${seeded.userId}`, auth));
    rows.push(await load(`GET /api/v1/users?per_page=20 (${USERS} users)`, `http://127.0.0.1:${PORT_APP}/api/v1/users?per_page=20`, auth));
  } finally {
    await stopProcess(app);
    await rm(dataDir, { recursive: true, force: true });
  }

  const ceiling = rows[0]?.requests ?? 1;
  const table = [
    '| scenario | req/s | p50 ms | p99 ms | non-2xx | of ceiling |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${Math.round(r.requests)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${((r.requests / ceiling) * 100).toFixed(1)}% |`,
    ),
  ];
  const report = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version},`,
    `database ${database}, rate-limit state ${redis}; ${CONNECTIONS} connections, ${DURATION} s per scenario after a 2 s warm-up;`,
    'server and load generator share the machine.',
    '',
    ...table,
    '',
  ].join('\n');
  await writeFile('bench/results.md', report);
  process.stdout.write(`\n${table.join('\n')}\n\nwrote bench/results.md\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
