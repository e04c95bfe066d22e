import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  const unlock = await lockDataDir(dataDir);
  try {
    const db = await openPGlite(dir);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    return {
      url: `postgresql://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`,
      async stop() {
        await server.stop();
        await db.close();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/**
 * PGlite over `dir`, or an error that says which directory and what to check: PGlite's own
 * ("PGlite failed to initialize properly", "Aborted()", or no message at all) names neither.
 */
async function openPGlite(dir: string): Promise<PGlite> {
  try {
    // pg_trgm backs the user search indexes (migration user_search).
    return await PGlite.create(dir, { extensions: { pg_trgm } });
  } catch (error) {
    const cause = describeFailure(error);
    throw new Error(
      `The embedded database in ${dir} could not be opened (${cause}). Check that DATA_DIR is readable and ` +
        'writable by this user and holds a data directory of this service; another DATA_DIR starts a new one.',
      { cause: error },
    );
  }
}

/** What PGlite threw, in words: an Error's message, or the name and errno of its file system's errors. */
function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null) {
    const { name, errno } = error as { name?: unknown; errno?: unknown };
    if (typeof name === 'string') return typeof errno === 'number' ? `${name} ${errno}` : name;
  }
  return String(error);
}

/**
 * One process at a time on a data directory. PGlite keeps no lock of its own, and a second process
 * on the same directory (`npm run cli` beside a running `npm start`) writes behind the first one's
 * back: the two lose each other's writes, or leave a directory that no longer opens. The lock is a
 * file holding the owner's pid, made exclusively; one whose process is gone (killed) is taken over.
 */
async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const path = join(resolve(dataDir), 'embedded.pid');
  // Written whole under a name of its own, then linked into place: the lock never exists empty.
  const mine = `${path}.${process.pid}`;
  await writeFile(mine, String(process.pid));
  try {
    for (;;) {
      try {
        await link(mine, path);
        return () => rm(path, { force: true });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const owner = await lockOwner(path);
      if (owner !== null && processExists(owner)) {
        throw new Error(
          `DATA_DIR ${resolve(dataDir)} is in use by process ${owner} (a running server?): stop it first, ` +
            `or delete ${path} if no such process uses it`,
        );
      }
      await rm(path, { force: true });
    }
  } finally {
    await rm(mine, { force: true });
  }
}

/** The pid in a lock file, or null when the file is gone or holds none. */
async function lockOwner(path: string): Promise<number | null> {
  try {
    const pid = Number.parseInt(await readFile(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, as another user's process.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function embeddedDataPath(dataDir: string): string {
  return join(resolve(dataDir), 'pgdata');
}
