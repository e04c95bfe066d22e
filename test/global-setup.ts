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

/**
 * One database for the run: DATABASE_URL when set, else a fresh embedded PostgreSQL; migrated once.
 * On PostgreSQL each worker then gets a copy of it (`CREATE DATABASE … TEMPLATE`), so the files run in
 * parallel never share tables: every test app runs the email and webhook dispatchers, which claim any
 * due row of their table, and one file's dispatcher would deliver another file's mail to its own sink.
 */
export default async function setup(project: TestProject) {
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

  const workers = embedded ? [] : Array.from({ length: Math.max(1, project.globalConfig.maxWorkers) }, (_, i) => i + 1);
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

  project.provide('databaseUrl', url);
  project.provide('embedded', embedded !== undefined);
  project.provide('workerDatabases', workers.length > 0);
  return async () => {
    await dropWorkerDatabases();
    await admin?.close(true);
    await embedded?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
