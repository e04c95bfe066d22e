import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../src/db/embedded.ts';
import { migrationsList } from '../src/db/migrations/index.ts';
import { ormOptions } from '../src/db/orm-config.ts';
import { TEST_MASTER_KEY } from './helpers/app.ts';
import { testDatabaseUrl } from './helpers/database.ts';
import { needsPostgresAndRedis } from './helpers/needs.ts';

/** `npm start` as a user runs it: a real process, its own port and DATA_DIR. */
interface Started {
  child: ChildProcess;
  output: () => string;
  url: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function start(env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, BASE_URL: '', DATABASE_URL: '', REDIS_URL: '', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('"msg":"listening"')) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => out, url: `http://127.0.0.1:${port}` };
}

async function stop(started: Started): Promise<number | null> {
  if (started.child.exitCode !== null) return started.child.exitCode;
  const exited = new Promise<number | null>((resolve) => started.child.once('exit', (code) => resolve(code)));
  started.child.kill('SIGTERM');
  return exited;
}

describe('npm start on a bare machine (embedded PostgreSQL, in-process limits)', () => {
  let dataDir: string;
  const apiKey = `sk_bootstrap_${'k'.repeat(24)}`;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'identity-start-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('bootstraps a workspace once, prints it, and keeps it across restarts', async () => {
    const env = { DATA_DIR: dataDir, BOOTSTRAP_OWNER_EMAIL: 'Boss@Example.com', BOOTSTRAP_API_KEY: apiKey };
    const first = await start(env);
    try {
      const out = first.output();
      const workspaceId = /workspace id\s+(wsp_\w+)/.exec(out)?.[1];
      expect(workspaceId).toBeDefined();
      expect(out).toContain(`secret API key ${apiKey}`);
      expect(out).toContain('owner email    boss@example.com');
      expect(out).toMatch(/owner password [A-Za-z0-9_-]{20,}/);
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${first.url}/readyz`);
      expect(await ready.json()).toEqual({ data: { status: 'ready', checks: { database: 'ok' } } });
      const users = (await (await fetch(`${first.url}/api/v1/users`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as {
        data: { email: string }[];
      };
      expect(users.data.map((u) => u.email)).toEqual(['boss@example.com']);
    } finally {
      expect(await stop(first)).toBe(0);
    }

    const second = await start({ DATA_DIR: dataDir });
    try {
      expect(second.output()).not.toContain('First start');
      const res = await fetch(`${second.url}/api/v1/users`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { meta: { total: number } }).meta.total).toBe(1);
      // The CLI on the running server's DATA_DIR is refused, naming the server's process, and writes nothing.
      const cli = promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'workspaces', 'create', '--name', 'Beside', '--owner-email', 'beside@example.com'],
        {
          env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', BASE_URL: '', DATA_DIR: dataDir },
        },
      );
      await expect(cli).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`is in use by process ${second.child.pid}`) });
      // So is a second server, told what to do in one line, not under a stack trace.
      const beside = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, BASE_URL: '', REDIS_URL: '', DATABASE_URL: '', DATA_DIR: dataDir, PORT: '0' },
      });
      let besideErr = '';
      beside.stderr.on('data', (chunk: Buffer) => (besideErr += chunk.toString()));
      expect(await new Promise<number | null>((resolve) => beside.once('exit', resolve))).toBe(1);
      expect(besideErr).toContain(`Start-up refused: DATA_DIR ${dataDir} is in use by process ${second.child.pid}`);
      expect(besideErr).not.toMatch(/^\s+at /m);
    } finally {
      await stop(second);
    }
  }, 120_000);

  it('takes over a lock left by a killed process whose pid is now another: its own, or a later process’s', async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'identity-relock-'));
    const lock = join(ownDir, 'embedded.pid');
    const env = { ...process.env, DATABASE_URL: '', REDIS_URL: '', BASE_URL: '', DATA_DIR: ownDir };
    try {
      // A container's server is pid 1 after every restart: the lock its killed predecessor left names
      // the new process itself (here the shell writes its pid, then becomes the CLI under that pid).
      const migrated = await promisify(execFile)(
        'sh',
        ['-c', `echo $$ > '${lock}' && exec '${process.execPath}' --import tsx src/cli.ts migrate`],
        {
          env,
        },
      );
      await expect(readFile(lock, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
      // `migrate` says what it applied: on a new directory, every migration, the latest last.
      const { applied } = JSON.parse(migrated.stdout) as { applied: string[] };
      expect(applied.at(-1)).toBe(migrationsList.at(-1)?.name);
      expect(applied).toHaveLength(migrationsList.length);
      if (existsSync('/proc/self/stat')) {
        // A live process holds the recorded pid, but it started at another time than the owner did.
        await writeFile(lock, `${process.pid} 1`);
        const again = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], { env });
        await expect(readFile(lock, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
        // Nothing left to apply, and it says so.
        expect(JSON.parse(again.stdout)).toEqual({ applied: [] });
      }
    } finally {
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('shuts down gracefully on SIGTERM: in-flight requests finish, new ones are refused, exit 0 within 10 s', async () => {
    const password = 'graceful shutdown passphrase';
    const ownDir = await mkdtemp(join(tmpdir(), 'identity-stop-'));
    // Operator-chosen secrets are taken as given, however short (a harness's `test-key`).
    const server = await start({
      DATA_DIR: ownDir,
      BOOTSTRAP_OWNER_EMAIL: 'boss@example.com',
      BOOTSTRAP_OWNER_PASSWORD: password,
      BOOTSTRAP_API_KEY: 'test-key',
      PLATFORM_API_TOKEN: 'platform',
    });
    const workspaceId = /workspace id\s+(wsp_\w+)/.exec(server.output())?.[1] as string;
    expect(server.output()).toContain(`owner password ${password}`);
    expect((await fetch(`${server.url}/api/v1/users`, { headers: { authorization: 'Bearer test-key' } })).status).toBe(200);
    const another = await fetch(`${server.url}/platform/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: 'Bearer platform', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Second', owner: { email: 'second@example.com', password } }),
    });
    expect(another.status).toBe(201);
    // A sign-in spends ~100 ms in Argon2id: it is in flight when the signal arrives.
    const inFlight = fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-tenant-id': workspaceId },
      body: JSON.stringify({ email: 'boss@example.com', password: 'not the password, still argon2' }),
    });
    await new Promise((r) => setTimeout(r, 20));
    const signalled = Date.now();
    const exited = stop(server);
    const answer = await inFlight;
    expect([401, 200]).toContain(answer.status);
    expect((await answer.json()) as object).toHaveProperty(answer.status === 401 ? 'error' : 'data');
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(server.output()).toContain('"msg":"stopped"');
    await rm(ownDir, { recursive: true, force: true });
  }, 120_000);
});

// Registered only where the services are configured (CI); a bare machine's run says it left it out.
needsPostgresAndRedis(describe, 'it starts the server on them')('npm start with DATABASE_URL and REDIS_URL', () => {
  it('uses the real PostgreSQL and Redis', async () => {
    // The test database is shared with the in-process apps, so the sealed signing keys are too.
    const started = await start({
      DATABASE_URL: testDatabaseUrl(),
      REDIS_URL: process.env.REDIS_URL as string,
      VAULT_MASTER_KEY: TEST_MASTER_KEY,
    });
    try {
      expect(started.output()).toContain('"database":"postgresql","redis":"redis"');
      const ready = await fetch(`${started.url}/readyz`);
      expect(await ready.json()).toEqual({ data: { status: 'ready', checks: { database: 'ok', redis: 'ok' } } });
    } finally {
      await stop(started);
    }
  }, 120_000);
});

describe('npm run cli -- --help', () => {
  it('prints the usage on stdout and exits 0, also after a command', async () => {
    for (const args of [['--help'], ['-h'], ['workspaces', 'create', '--help']]) {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
        env: { ...process.env, DATABASE_URL: '', REDIS_URL: '' },
      });
      expect(stdout, args.join(' ')).toContain('npm run cli -- workspaces create --name NAME --owner-email EMAIL');
    }
  }, 120_000);
});

describe('configuration errors', () => {
  it('stop start-up with a message naming the variable', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty', REDIS_URL: 'http://nope' },
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain('PORT');
    expect(err).toContain('REDIS_URL');
  }, 30_000);

  it('says that the master key is not the one the database was sealed with, and which variable to set', async () => {
    // A database of its own (embedded, on both kinds of run), first started under one master key.
    const ownDir = await mkdtemp(join(tmpdir(), 'identity-masterkey-'));
    try {
      await stop(await start({ DATA_DIR: ownDir, VAULT_MASTER_KEY: TEST_MASTER_KEY }));
      const otherKey = Buffer.alloc(32, 9).toString('base64');
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, BASE_URL: '', REDIS_URL: '', DATABASE_URL: '', DATA_DIR: ownDir, VAULT_MASTER_KEY: otherKey, PORT: '0' },
      });
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(1);
      expect(err).toContain('Start-up refused: A secret in the database does not open with the master key in use');
      expect(err).not.toMatch(/^\s+at /m);
      expect(err).toContain('Set VAULT_MASTER_KEY to the key the database was first used with');
    } finally {
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('keeps the embedded database closed to other users, also when an older start left it open', async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'identity-mode-'));
    const pgdata = join(ownDir, 'pgdata');
    try {
      for (let start = 0; start < 2; start++) {
        const db = await startEmbeddedPostgres(ownDir);
        try {
          // PGlite's own files are 0666: the directory is what keeps them from other users.
          expect((await stat(pgdata)).mode & 0o777).toBe(0o700);
        } finally {
          await db.stop();
        }
        await chmod(pgdata, 0o755);
      }
    } finally {
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('serves the embedded database on a Unix socket only its own user can reach, also for a long DATA_DIR', async () => {
    const base = await mkdtemp(join(tmpdir(), 'identity-socket-'));
    // Past the 103 bytes a socket path may take: the socket moves to a private temporary directory.
    const long = join(base, 'd'.repeat(100));
    try {
      for (const dataDir of [base, long]) {
        const db = await startEmbeddedPostgres(dataDir);
        let socketDir: string;
        try {
          const url = new URL(db.url);
          socketDir = decodeURIComponent(url.hostname);
          // A directory, not a loopback address that any local user could connect to with any password.
          expect(socketDir.startsWith('/')).toBe(true);
          expect(socketDir).toBe(dataDir === base ? join(base, 'socket') : socketDir);
          if (dataDir === long) expect(socketDir.startsWith(tmpdir())).toBe(true);
          expect((await stat(socketDir)).mode & 0o777).toBe(0o700);
          expect((await stat(join(socketDir, '.s.PGSQL.5432'))).isSocket()).toBe(true);
          // The URL the server hands its ORM connects.
          const orm = await MikroORM.init(ormOptions(db.url, 1));
          try {
            expect(await orm.em.getConnection().execute('select 1 as one')).toEqual([{ one: 1 }]);
          } finally {
            await orm.close(true);
          }
        } finally {
          await db.stop();
        }
        expect(existsSync(join(socketDir, '.s.PGSQL.5432'))).toBe(false);
        if (dataDir === long) expect(existsSync(socketDir)).toBe(false);
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 120_000);

  it('says which DATA_DIR could not be opened, and what to check, when it holds something else', async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'identity-junk-'));
    try {
      await mkdir(join(ownDir, 'pgdata'));
      await writeFile(join(ownDir, 'pgdata', 'PG_VERSION'), 'not a database\n');
      for (let attempt = 0; attempt < 2; attempt++) {
        // The second attempt meets the same error, not a lock left behind by the first.
        await expect(startEmbeddedPostgres(ownDir)).rejects.toThrow(
          `The embedded database in ${join(ownDir, 'pgdata')} could not be opened (PGlite failed to initialize properly). Check that DATA_DIR`,
        );
      }
    } finally {
      await rm(ownDir, { recursive: true, force: true });
    }
  }, 120_000);
});
