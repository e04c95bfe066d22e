import { inject } from 'vitest';

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
