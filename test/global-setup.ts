import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';
import { ormOptions } from '../src/db/orm-config.ts';
import { workerDatabaseName } from './helpers/database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    embedded: boolean;
    workerDatabases: boolean;
  }
}

/** What the run's database set-up made, and how to undo it. */
interface Prepared {
  url: string;
  embedded: boolean;
  workerDatabases: boolean;
  teardown: () => Promise<void>;
}

/**
 * The set-up is shared by the projects that name it (vitest.config.ts: 'app' and 'app-isolated'), one
 * for the run: each project's call loads this file on its own, so the shared state lives on
 * `globalThis`, and the last project to tear down undoes it.
 */
const SHARED = Symbol.for('identity-service.test-database');
type Shared = { ready: Promise<Prepared>; users: number };
const holder = globalThis as { [SHARED]?: Shared };

/**
 * One database for the run: DATABASE_URL when set, else a fresh embedded PostgreSQL; migrated once.
 * On PostgreSQL each worker then gets a copy of it (`CREATE DATABASE … TEMPLATE`), so the files run in
 * parallel never share tables: every test app runs the email and webhook dispatchers, which claim any
 * due row of their table, and one file's dispatcher would deliver another file's mail to its own sink.
 */
async function prepare(maxWorkers: number): Promise<Prepared> {
  let embedded: EmbeddedPostgres | undefined;
  let dataDir: string | undefined;
  let url = process.env.DATABASE_URL;
  if (!url) {
    dataDir = await mkdtemp(join(tmpdir(), 'identity-test-'));
    embedded = await startEmbeddedPostgres(dataDir);
    url = embedded.url;
  }
  const orm = await MikroORM.init(ormOptions(url, 1));
  await orm.getMigrator().up();
  await orm.close(true);

  const workers = embedded ? [] : Array.from({ length: Math.max(1, maxWorkers) }, (_, i) => i + 1);
  const template = new URL(url).pathname.slice(1);
  const admin = workers.length > 0 ? await MikroORM.init(ormOptions(url.replace(/\/[^/?]*(\?|$)/, '/postgres$1'), 1)) : null;
  const dropWorkerDatabases = async () => {
    for (const worker of workers)
      await admin?.em.getConnection().execute(`drop database if exists "${workerDatabaseName(template, worker)}"`);
  };
  await dropWorkerDatabases();
  for (const worker of workers) {
    await admin?.em.getConnection().execute(`create database "${workerDatabaseName(template, worker)}" template "${template}"`);
  }
  return {
    url,
    embedded: embedded !== undefined,
    workerDatabases: workers.length > 0,
    teardown: async () => {
      await dropWorkerDatabases();
      await admin?.close(true);
      await embedded?.stop();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject) {
  const shared = (holder[SHARED] ??= { ready: prepare(project.globalConfig.maxWorkers), users: 0 });
  shared.users += 1;
  const prepared = await shared.ready;
  project.provide('databaseUrl', prepared.url);
  project.provide('embedded', prepared.embedded);
  project.provide('workerDatabases', prepared.workerDatabases);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete holder[SHARED];
    await prepared.teardown();
  };
}
