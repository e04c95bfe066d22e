import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';
import { ormOptions } from '../src/db/orm-config.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    embedded: boolean;
  }
}

/** One database for the run: DATABASE_URL when set, else a fresh embedded PostgreSQL; migrated once. */
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
  project.provide('databaseUrl', url);
  project.provide('embedded', embedded !== undefined);
  return async () => {
    await embedded?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  };
}
