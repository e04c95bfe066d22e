import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';

/**
 * The fault suite's machinery: its own PostgreSQL cluster and Redis server on free ports (so a test
 * may stop, kill and restart them without touching anyone else's), the service as a child process
 * (so SIGKILL is real), a webhook receiver, and an HTTP client that measures and never hangs.
 */

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const API_KEY = 'sk_faults_0123456789abcdefghij';
export const OWNER_EMAIL = 'owner@faults.test';
export const OWNER_PASSWORD = 'fault tolerant owner 1';
export const MASTER_KEY = Buffer.alloc(32, 11).toString('base64');
/** Instances behind one load balancer share the public URL, which is also the access tokens' issuer. */
export const SHARED_BASE_URL = 'http://identity.faults.test';

/* Everything started here is stopped when the test process exits, even after a failed assertion. */
const children = new Set<ChildProcess>();
const clusters = new Set<PgCluster>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const cluster of clusters) cluster.stopSync();
});

export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

function run(command: string, args: string[], opts: { cwd?: string } = {}): string {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: opts.cwd });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function postgresBinDir(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (fromConfig.status === 0 && existsSync(join(fromConfig.stdout.trim(), 'initdb'))) return fromConfig.stdout.trim();
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
  if (!found) throw new Error('PostgreSQL server binaries not found: set PG_BIN to the directory holding initdb and pg_ctl');
  return found;
}

/**
 * A throw-away PostgreSQL cluster. PostgreSQL refuses to run as root, so when the tests run as root
 * (CI containers) its commands run as the `postgres` OS user through runuser.
 */
export class PgCluster {
  private running = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly asUser: string[],
  ) {}

  static async create(): Promise<PgCluster> {
    const bin = postgresBinDir();
    const dir = mkdtempSync(join(tmpdir(), 'identity-faults-pg-'));
    let asUser: string[] = [];
    if (process.getuid?.() === 0) {
      const uid = Number(run('id', ['-u', 'postgres']).trim());
      const gid = Number(run('id', ['-g', 'postgres']).trim());
      chownSync(dir, uid, gid);
      asUser = ['runuser', '-u', 'postgres', '--'];
    }
    const cluster = new PgCluster(dir, await freePort(), bin, asUser);
    cluster.exec('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    clusters.add(cluster);
    await cluster.start();
    return cluster;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private exec(tool: string, args: string[]): string {
    const command = [...this.asUser, join(this.bin, tool), ...args];
    return run(command[0] as string, command.slice(1), { cwd: this.dir });
  }

  /**
   * fsync is off: the tests kill processes, never the machine, and a write PostgreSQL acknowledged
   * is in its WAL in the OS page cache, which survives the process (crash recovery replays it).
   */
  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
    this.exec('pg_ctl', ['-D', this.dataDir, '-o', options, '-l', join(this.dir, 'log'), '-w', '-t', '30', 'start']);
    this.running = true;
  }

  /** `pg_ctl stop -m immediate`: every backend is killed at once, no checkpoint (a crash, for clients). */
  stopImmediate(): void {
    this.exec('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
    this.running = false;
  }

  stopSync(): void {
    if (!this.running) return;
    this.running = false;
    const command = [...this.asUser, join(this.bin, 'pg_ctl'), '-D', this.dataDir, '-m', 'immediate', 'stop'];
    spawnSync(command[0] as string, command.slice(1), { cwd: this.dir });
  }

  destroy(): void {
    this.stopSync();
    clusters.delete(this);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Rows of a query, read through psql as one JSON array. */
  query<T>(sql: string): T[] {
    const out = run('psql', [
      '-h',
      '127.0.0.1',
      '-p',
      String(this.port),
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-XAt',
      '-v',
      'ON_ERROR_STOP=1',
      '-c',
      `select coalesce(json_agg(q), '[]') from (${sql}) q`,
    ]);
    return JSON.parse(out) as T[];
  }

  /** The server log, for failure messages. */
  log(): string {
    return readFileSync(join(this.dir, 'log'), 'utf8');
  }
}

/** redis-server without persistence, like the cache it is; kill() and restart() keep its port. */
export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async restart(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    this.child = child;
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor('redis-server to accept connections', async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited:\n${out}`);
      return out.includes('Ready to accept connections') ? true : undefined;
    });
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    children.delete(child);
    this.child = null;
  }

  /** A command through redis-cli (no client library needed for a few assertions). */
  cli(...args: string[]): string {
    return run('redis-cli', ['-p', String(this.port), ...args]).trim();
  }
}

export interface AppOptions {
  databaseUrl: string;
  redisUrl?: string;
  env?: Record<string, string>;
  /** A restart keeps its port (and so its BASE_URL, the token issuer). */
  port?: number;
}

/** The service as `node --import tsx src/main.ts`, ready once it logs `listening`. */
export class AppProcess {
  private lines: string[] = [];

  private constructor(
    readonly options: AppOptions,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  static async start(options: AppOptions): Promise<AppProcess> {
    const port = options.port ?? (await freePort());
    const url = `http://127.0.0.1:${port}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: url,
      DATA_DIR: join(tmpdir(), `identity-faults-app-${port}`),
      DATABASE_URL: options.databaseUrl,
      TRUST_PROXY: 'loopback',
      VAULT_MASTER_KEY: MASTER_KEY,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      BOOTSTRAP_WORKSPACE_NAME: 'Faults',
      BOOTSTRAP_OWNER_EMAIL: OWNER_EMAIL,
      BOOTSTRAP_OWNER_PASSWORD: OWNER_PASSWORD,
      BOOTSTRAP_API_KEY: API_KEY,
      ...(options.redisUrl ? { REDIS_URL: options.redisUrl } : {}),
      ...options.env,
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const app = new AppProcess(options, port, child);
    let partial = '';
    const collect = (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      app.lines.push(...parts);
      if (app.lines.length > 2_000) app.lines.splice(0, app.lines.length - 2_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    await waitFor(
      `the app on port ${port} to listen`,
      async () => {
        if (child.exitCode !== null) throw new Error(`the app exited with ${child.exitCode}:\n${app.logTail()}`);
        return app.lines.some((line) => line.includes('"msg":"listening"')) ? true : undefined;
      },
      60_000,
    );
    return app;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  logTail(lines = 60): string {
    return this.lines.slice(-lines).join('\n');
  }

  /** The log lines that mention a request id (assertion messages). */
  linesAbout(requestId: string | null): string {
    return requestId ? this.lines.filter((line) => line.includes(requestId)).join('\n') : '';
  }

  /** Log lines that are JSON with this `msg`. */
  logged(msg: string): number {
    return this.lines.filter((line) => line.includes(`"msg":"${msg}"`)).length;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 15_000): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
    children.delete(this.child);
  }

  /** The same process options and port, started again. */
  restart(): Promise<AppProcess> {
    return AppProcess.start({ ...this.options, port: this.port });
  }
}

export interface Reply {
  /** 0 when no HTTP answer came (refused, reset, timed out). */
  status: number;
  body: unknown;
  headers: Headers;
  ms: number;
  error?: string;
}

export interface RequestOptions {
  body?: unknown;
  token?: string;
  /** The client address the app sees (TRUST_PROXY=loopback). */
  ip?: string;
  tenant?: string;
  timeoutMs?: number;
}

/** One HTTP call, timed; a network failure or a timeout is an answer with status 0, never a throw. */
export async function request(base: string, method: string, path: string, opts: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.ip) headers['x-forwarded-for'] = opts.ip;
  if (opts.tenant) headers['x-tenant-id'] = opts.tenant;
  const started = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    const body: unknown = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
    return { status: res.status, body, headers: res.headers, ms: performance.now() - started };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return {
      status: 0,
      body: null,
      headers: new Headers(),
      ms: performance.now() - started,
      error: `${error instanceof Error ? error.message : String(error)}${cause}`,
    };
  }
}

/** A value inside a JSON answer by its path (`data.user.id`); undefined when absent. */
export function dig(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** A string inside a JSON answer; throws with the answer when it is not one. */
export function text(reply: Reply | unknown, path: string): string {
  const body = isReply(reply) ? reply.body : reply;
  const value = dig(body, path);
  if (typeof value !== 'string') throw new Error(`no string at ${path} in ${JSON.stringify(isReply(reply) ? reply : body).slice(0, 800)}`);
  return value;
}

function isReply(value: unknown): value is Reply {
  return typeof value === 'object' && value !== null && 'status' in value && 'ms' in value && 'headers' in value;
}

/** The error code of an envelope answer. */
export function errorCode(reply: Reply): unknown {
  return dig(reply.body, 'error.code');
}

let ipSeed = 0;
/** A client address no other request of the run used (each test owns its rate-limit budgets). */
export function freshIp(): string {
  ipSeed += 1;
  return `10.${(process.pid >> 8) & 255}.${(ipSeed >> 8) & 255}.${ipSeed & 255}`;
}

export interface ReceivedWebhook {
  id: string;
  type: unknown;
  body: string;
  verified: boolean;
  at: number;
}

/**
 * A local webhook receiver: records every delivery, verifies its Standard Webhooks signature with the
 * endpoint's secret (set once the endpoint exists), and can answer slowly so sends are in flight.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  secret: string | null = null;
  delayMs = 0;
  private server: Server | null = null;
  port = 0;

  async start(): Promise<string> {
    const server = createHttpServer((req, res) => {
      void this.accept(req).then(async () => {
        if (this.delayMs > 0) await sleep(this.delayMs);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  private async accept(req: IncomingMessage): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let verified = false;
    if (this.secret) {
      try {
        new Webhook(this.secret).verify(body, headers);
        verified = true;
      } catch (error) {
        process.stderr.write(`webhook ${headers['webhook-id']} failed verification: ${String(error)}\n`);
      }
    }
    const type = (JSON.parse(body) as { type?: unknown }).type;
    this.received.push({ id: headers['webhook-id'], type, body, verified, at: Date.now() });
  }

  /** How many times each webhook-id arrived. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { id } of this.received) counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Runs `work` on `concurrency` loops until `stop()` resolves true or is called. */
export function loop(concurrency: number, work: (worker: number, round: number) => Promise<void>) {
  let stopped = false;
  const workers = Array.from({ length: concurrency }, async (_, worker) => {
    for (let round = 0; !stopped; round += 1) await work(worker, round);
  });
  return {
    async stop(): Promise<void> {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

export function percentile(values: number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number;
}
