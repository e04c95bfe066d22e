import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PostgreSQL for a bare machine: PGlite (Postgres compiled to WASM) with its data under DATA_DIR,
 * served on a loopback port so the ORM speaks the ordinary wire protocol to it. PGlite has a single
 * backend, so the ORM must use a pool of exactly one connection.
 */
export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = resolve(dataDir, 'pgdata');
  await mkdir(resolve(dataDir), { recursive: true });
  // pg_trgm backs the user search indexes (migration user_search).
  const db = await PGlite.create(dir, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  return {
    url: `postgresql://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

export function embeddedDataPath(dataDir: string): string {
  return join(resolve(dataDir), 'pgdata');
}
