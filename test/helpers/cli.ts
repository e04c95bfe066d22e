import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MikroORM } from '@mikro-orm/postgresql';
import { inject } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { ormOptions } from '../../src/db/orm-config.ts';
import { TEST_MASTER_KEY } from './app.ts';
import { copyRunDatabase } from './database.ts';

const execute = promisify(execFile);

export interface CliResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * `npm run cli -- …`, which is `tsx src/cli.ts …`, run as `node --import tsx src/cli.ts …`: the same
 * process without npx resolving tsx's bin first (a second or more of CPU per call on a loaded 2-core
 * machine). Answers stdout, stderr and the exit code instead of throwing on a non-zero one.
 */
export async function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await execute(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

export interface CliDatabase {
  /** The environment the CLI runs in: this database only, no Redis, no BASE_URL. */
  env: NodeJS.ProcessEnv;
  /** An ORM on the same database, for a test to write rows the CLI then acts on; the CLI must not run meanwhile. */
  open(): Promise<{ orm: MikroORM; close(): Promise<void> }>;
  drop(): Promise<void>;
}

/**
 * A database the CLI has to itself, fresh (migrated, nothing in it): on PostgreSQL a copy of the run's
 * migrated database, on a bare machine's run an embedded database in a new DATA_DIR (the shared one
 * takes a single connection, held by the test apps). On PostgreSQL this spares every CLI call
 * starting PGlite and migrating it, tens of seconds each under load; the CLI's embedded path is
 * covered on every run by test/startup.test.ts.
 */
export async function cliDatabase(label: string): Promise<CliDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), `identity-${label}-`));
  const base = { ...process.env, REDIS_URL: '', BASE_URL: '', DATA_DIR: dataDir };
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true });
  if (inject('embedded')) {
    return {
      env: { ...base, DATABASE_URL: '' },
      async open() {
        const embedded = await startEmbeddedPostgres(dataDir);
        const orm = await MikroORM.init(ormOptions(embedded.url, 1));
        return {
          orm,
          async close() {
            await orm.close(true);
            await embedded.stop();
          },
        };
      },
      drop: removeDataDir,
    };
  }
  const copy = await copyRunDatabase(label);
  return {
    env: { ...base, DATABASE_URL: copy.url, VAULT_MASTER_KEY: TEST_MASTER_KEY },
    async open() {
      const orm = await MikroORM.init(ormOptions(copy.url, 1));
      return { orm, close: () => orm.close(true) };
    },
    async drop() {
      await copy.drop();
      await removeDataDir();
    },
  };
}
