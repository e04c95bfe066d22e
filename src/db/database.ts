import { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import { startEmbeddedPostgres } from './embedded.ts';
import { ormOptions } from './orm-config.ts';
import { ADVISORY_LOCKS } from '../core/advisory-locks.ts';

export interface Database {
  orm: MikroORM;
  embedded: boolean;
  /** The migrations this opening applied, by name, oldest first (none when it was not asked to migrate). */
  applied: string[];
  close(): Promise<void>;
}

/** Connects to DATABASE_URL, or starts the embedded PostgreSQL under DATA_DIR when it is unset. */
export async function openDatabase(config: Config, log: Logger, opts: { migrate: boolean }): Promise<Database> {
  const embedded = config.DATABASE_URL === undefined ? await startEmbeddedPostgres(config.DATA_DIR) : undefined;
  const url = embedded?.url ?? (config.DATABASE_URL as string);
  const orm = await MikroORM.init(ormOptions(url, embedded ? 1 : 10));
  let applied: string[] = [];
  if (opts.migrate) {
    const ran = embedded ? await orm.getMigrator().up() : await withMigrationLock(orm, () => orm.getMigrator().up());
    applied = ran.map((m) => m.name);
    if (applied.length > 0) log.info('migrations applied', { migrations: applied });
  }
  return {
    orm,
    embedded: embedded !== undefined,
    applied,
    async close() {
      await orm.close(true);
      await embedded?.stop();
    },
  };
}

interface LockConnection {
  query(sql: string): Promise<unknown>;
}

/**
 * Instances started together migrate one at a time: a session-level advisory lock, held on a
 * connection of its own while the migrator works on the others (the embedded database has one
 * process, so it needs none).
 */
async function withMigrationLock<T>(orm: MikroORM, work: () => Promise<T>): Promise<T> {
  const client = (
    orm.em.getConnection().getKnex() as unknown as {
      client: { acquireConnection(): Promise<LockConnection>; releaseConnection(c: LockConnection): Promise<unknown> };
    }
  ).client;
  const connection = await client.acquireConnection();
  try {
    await connection.query(`select pg_advisory_lock(${ADVISORY_LOCKS.migrations})`);
    try {
      return await work();
    } finally {
      await connection.query(`select pg_advisory_unlock(${ADVISORY_LOCKS.migrations})`);
    }
  } finally {
    await client.releaseConnection(connection);
  }
}
