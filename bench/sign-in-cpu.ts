import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.ts';
import { delta, threadsOf, type ThreadCpu } from './cpu-threads.ts';
import { BENCH_PASSWORD, seed, type Seeded } from './seed.ts';
import { serverEnv, startProcess } from './processes.ts';

/**
 * Where a password sign-in's CPU goes: the bench's sign-in scenario (same requests, 32 connections)
 * for SIGN_INS sign-ins against the real server, with the CPU time of each component read off /proc
 * before and after: the server's main thread, its libuv pool threads and its other threads, the
 * PostgreSQL backends of its database, the Redis server REDIS_URL names, and this process (the load
 * generator). CPU time, unlike throughput, barely moves when other work shares the machine.
 * Needs DATABASE_URL and REDIS_URL; seeds BENCH_USERS users once and remembers them in SEED_FILE.
 * SIGN_INS and WARM_UP must be at least BENCH_CONNECTIONS (autocannon refuses fewer requests than connections).
 * With CEILING=1 it also reads the raw Argon2id ceiling's CPU per verify (bench/argon2-ceiling-cpu.ts).
 */
const SIGN_INS = Number(process.env.SIGN_INS ?? 800);
const WARM_UP = Number(process.env.WARM_UP ?? 200);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const PORT = Number(process.env.BENCH_PORT ?? 3901);
const SEED_FILE = process.env.SEED_FILE ?? join(tmpdir(), 'sign-in-cpu-seed.json');

async function seeded(): Promise<Pick<Seeded, 'workspaceId' | 'emails'>> {
  if (existsSync(SEED_FILE)) return JSON.parse(readFileSync(SEED_FILE, 'utf8')) as Seeded;
  const config = loadConfig({ ...process.env, ...serverEnv(PORT, await mkdtemp(join(tmpdir(), 'sign-in-cpu-'))) });
  const made = await seed(config, USERS, 0);
  writeFileSync(SEED_FILE, JSON.stringify({ workspaceId: made.workspaceId, emails: made.emails }));
  return made;
}

async function startServer(): Promise<ChildProcess> {
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const dataDir = await mkdtemp(join(tmpdir(), 'sign-in-cpu-'));
  return startProcess([...nodeArgs, '--import', 'tsx', 'src/main.ts'], serverEnv(PORT, dataDir));
}

let ip = 0;
async function signIns(count: number, workspaceId: string, emails: string[], offset: number): Promise<number> {
  let i = offset;
  const result = await autocannon({
    url: `http://127.0.0.1:${PORT}/api/v1/auth/login`,
    connections: CONNECTIONS,
    amount: count,
    requests: [
      {
        setupRequest: (req: autocannon.Request) => {
          ip += 1;
          return {
            ...req,
            method: 'POST',
            headers: {
              'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`,
              'content-type': 'application/json',
              'x-tenant-id': workspaceId,
            },
            body: JSON.stringify({ email: emails[i++ % emails.length], password: BENCH_PASSWORD }),
          };
        },
      },
    ],
  });
  return result.non2xx + result.errors;
}

/**
 * The PostgreSQL backends serving the database, found by their process titles (`postgres: … <user>
 * <database> <host>…`). The pool may close and open connections during a run, so a worker thread looks
 * for them every 200 ms and keeps each one's first and last reading (a backend first seen during the
 * run counts from zero). It is a thread of its own so that this process's main thread, the load
 * generator, is measured alone.
 */
const WATCH = `
const { parentPort, workerData } = require('node:worker_threads');
const { readdirSync, readFileSync } = require('node:fs');
const first = new Map(), last = new Map();
let running = false;
// A backend that ended between listing and reading: /proc answers ENOENT or ESRCH.
function gone(error) {
  if (error.code !== 'ENOENT' && error.code !== 'ESRCH') throw error;
  return null;
}
function cpu(pid) {
  try { return readdirSync('/proc/' + pid + '/task').reduce((s, t) => s + Number(readFileSync('/proc/' + pid + '/task/' + t + '/schedstat', 'utf8').split(' ')[0]), 0); }
  catch (error) { return gone(error); }
}
function read() {
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let title;
    try { title = readFileSync('/proc/' + entry + '/cmdline', 'utf8'); } catch (error) { gone(error); continue; }
    if (!title.startsWith('postgres: ') || !title.split(' ').includes(workerData)) continue;
    const ns = cpu(entry);
    if (ns === null) continue;
    if (!first.has(entry)) first.set(entry, running ? 0 : ns);
    last.set(entry, ns);
  }
}
read();
running = true;
const timer = setInterval(read, 200);
parentPort.postMessage('started');
parentPort.on('message', () => {
  clearInterval(timer);
  read();
  let total = 0, backends = 0;
  for (const [pid, ns] of last) { const d = ns - first.get(pid); total += d; if (d > 0) backends++; }
  parentPort.postMessage({ cpuNs: total, backends });
});`;

async function watchBackends(database: string): Promise<() => Promise<{ cpuNs: number; backends: number }>> {
  const worker = new Worker(WATCH, { eval: true, workerData: database });
  await once(worker, 'message');
  return async () => {
    worker.postMessage('stop');
    const [result] = (await once(worker, 'message')) as [{ cpuNs: number; backends: number }];
    await worker.terminate();
    return result;
  };
}

function redisPid(): number {
  const url = new URL(process.env.REDIS_URL ?? '');
  const info = execFileSync('redis-cli', ['-h', url.hostname, '-p', url.port || '6379', 'info', 'server']).toString();
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

interface Snapshot {
  server: ThreadCpu[];
  redis: ThreadCpu[];
  /** This process's main thread: the load generator. */
  loader: ThreadCpu[];
  at: number;
}

function snapshot(serverPid: number, redis: number): Snapshot {
  return {
    server: threadsOf(serverPid),
    redis: threadsOf(redis),
    loader: threadsOf(process.pid).filter((t) => t.tid === process.pid),
    at: performance.now(),
  };
}

const sum = (threads: ThreadCpu[], pick: (t: ThreadCpu) => number = (t) => t.cpuNs) => threads.reduce((s, t) => s + pick(t), 0);

async function main(): Promise<void> {
  const { workspaceId, emails } = await seeded();
  const server = await startServer();
  const pid = server.pid as number;
  try {
    const probe = await fetch(`http://127.0.0.1:${PORT}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': workspaceId },
      body: JSON.stringify({ email: emails[0], password: BENCH_PASSWORD }),
    });
    if (probe.status !== 200) throw new Error(`sign-in probe answered ${probe.status}: ${await probe.text()}`);
    const offset = Math.floor(Math.random() * emails.length);
    await signIns(WARM_UP, workspaceId, emails, offset);
    const redis = redisPid();
    const stopWatch = await watchBackends(new URL(process.env.DATABASE_URL ?? '').pathname.slice(1));
    const before = snapshot(pid, redis);
    const failed = await signIns(SIGN_INS, workspaceId, emails, offset + WARM_UP);
    const after = snapshot(pid, redis);
    const pg = await stopWatch();
    const serverThreads = delta(before.server, after.server);
    const main = serverThreads.filter((t) => t.tid === pid);
    // This Node names no thread; the pool threads are the ones that ran the hashes (ms each per sign-in).
    const isPool = (t: ThreadCpu) => t.tid !== pid && t.cpuNs / 1e6 / SIGN_INS > 2;
    const pool = serverThreads.filter(isPool);
    const other = serverThreads.filter((t) => t.tid !== pid && !isPool(t));
    const redisThreads = delta(before.redis, after.redis);
    const loader = sum(delta(before.loader, after.loader));
    const per = (ns: number) => Number((ns / 1e6 / SIGN_INS).toFixed(3));
    const row = {
      signIns: SIGN_INS,
      failed,
      wallS: Number(((after.at - before.at) / 1000).toFixed(1)),
      msPerSignIn: {
        main: per(sum(main)),
        pool: per(sum(pool)),
        serverOther: per(sum(other)),
        postgres: per(pg.cpuNs),
        redis: per(sum(redisThreads)),
        loadGenerator: per(loader),
      },
      nonHash: per(sum(main) + sum(other) + pg.cpuNs + sum(redisThreads) + loader),
      poolMigrationsPerVerify: Number((sum(pool, (t) => t.migrations) / SIGN_INS).toFixed(2)),
      poolPreemptionsPerVerify: Number((sum(pool, (t) => t.involuntary) / SIGN_INS).toFixed(2)),
      poolFaultsPerVerify: Math.round(sum(pool, (t) => t.minorFaults) / SIGN_INS),
      mainFaultsPerSignIn: Math.round(sum(main, (t) => t.minorFaults) / SIGN_INS),
      poolThreads: pool.length,
      otherThreads: Object.fromEntries(
        other.filter((t) => t.cpuNs / 1e6 / SIGN_INS > 0.05).map((t) => [`${t.name}#${t.tid}`, per(t.cpuNs)]),
      ),
      postgresBackends: pg.backends,
    };
    process.stdout.write(`${JSON.stringify(row)}\n`);
  } finally {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  if (process.env.CEILING === '1') {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/argon2-ceiling-cpu.ts'], {
      env: { ...process.env, UV_THREADPOOL_SIZE: String(cpus().length), VERIFIES: String(SIGN_INS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise((resolve) => child.once('exit', resolve));
    const raw = JSON.parse(out.trim().split('\n').at(-1) ?? '') as { verifies: number; wallMs: number; threads: ThreadCpu[] };
    const pool = raw.threads.filter((t) => t.cpuNs / 1e6 / raw.verifies > 2);
    const rest = raw.threads.filter((t) => t.cpuNs / 1e6 / raw.verifies <= 2);
    process.stdout.write(
      `${JSON.stringify({
        ceiling: {
          verifies: raw.verifies,
          poolMsPerVerify: Number((sum(pool) / 1e6 / raw.verifies).toFixed(3)),
          restMsPerVerify: Number((sum(rest) / 1e6 / raw.verifies).toFixed(3)),
          poolMigrationsPerVerify: Number((sum(pool, (t) => t.migrations) / raw.verifies).toFixed(2)),
          poolPreemptionsPerVerify: Number((sum(pool, (t) => t.involuntary) / raw.verifies).toFixed(2)),
          poolFaultsPerVerify: Math.round(sum(pool, (t) => t.minorFaults) / raw.verifies),
          ratePerS: Number(((raw.verifies / raw.wallMs) * 1000).toFixed(1)),
        },
      })}\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
