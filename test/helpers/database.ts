import { MikroORM } from '@mikro-orm/postgresql';
import { inject } from 'vitest';
import { ormOptions } from '../../src/db/orm-config.ts';

/** The copy of the run's database that worker `worker` uses (test/global-setup.ts makes them). */
export function workerDatabaseName(template: string, worker: number): string {
  return `${template}_w${worker}`;
}

/** This test file's database: its worker's copy on PostgreSQL, the one embedded database otherwise. */
export function testDatabaseUrl(): string {
  const url = inject('databaseUrl');
  if (!inject('workerDatabases')) return url;
  const parsed = new URL(url);
  parsed.pathname = `/${workerDatabaseName(parsed.pathname.slice(1), Number(process.env.VITEST_POOL_ID ?? 1))}`;
  return parsed.toString();
}

/**
 * A database of the caller's own on PostgreSQL, copied from the run's migrated one (which no test
 * writes to): for tests whose writes no other file may see, or that need a database with nothing in it.
 * `label` tells one file's copies apart; the process id, files running at once.
 */
export async function copyRunDatabase(label: string): Promise<{ url: string; drop(): Promise<void> }> {
  const template = new URL(inject('databaseUrl'));
  const name = `${template.pathname.slice(1)}_${label}_${process.pid}`;
  const admin = new URL(template);
  admin.pathname = '/postgres';
  const orm = await MikroORM.init(ormOptions(admin.toString(), 1));
  const sql = (text: string) => orm.em.getConnection().execute(text);
  await sql(`drop database if exists "${name}"`);
  await sql(`create database "${name}" template "${template.pathname.slice(1)}"`);
  const url = new URL(template);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      // Forced: a CLI a timed-out test left running would otherwise keep the copy alive.
      await sql(`drop database if exists "${name}" with (force)`);
      await orm.close(true);
    },
  };
}
