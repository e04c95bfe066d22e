import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { OperatorError } from '../core/operator-error.ts';

/**
 * PostgreSQL for a bare machine: PGlite (Postgres compiled to WASM) with its data under DATA_DIR,
 * served on a Unix socket so the ORM speaks the ordinary wire protocol to it. PGlite has a single
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
    const listening = await listen(db, dataDir);
    return {
      url: listening.url,
      async stop() {
        await listening.stop();
        await db.close();
        await unlock();
      },
    };
  } catch (error) {
    await unlock();
    throw error;
  }
}

/** The file name PostgreSQL clients (node-postgres included) look for in a socket directory, for port 5432. */
const SOCKET_FILE = '.s.PGSQL.5432';

/**
 * Longest socket path to bind: the kernel's `sun_path` holds 108 bytes on Linux and 104 on macOS,
 * its terminating NUL included.
 */
const SOCKET_PATH_MAX = 103;

/**
 * Serves PGlite where only this user can connect. PGlite takes any user name and password, so a
 * loopback port would let every local user (and every process of another container sharing the
 * network namespace) read password hashes or write themselves an API key. A Unix socket in a
 * directory of mode 0700 is reachable by this user alone: `DATA_DIR/socket`, or a private directory
 * under the system's temporary directory when DATA_DIR's path is too long for a socket. Windows has
 * no such sockets for node-postgres and keeps the loopback port.
 */
async function listen(db: PGlite, dataDir: string): Promise<{ url: string; stop(): Promise<void> }> {
  if (process.platform === 'win32') {
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
    await server.start();
    return { url: `postgresql://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`, stop: () => server.stop() };
  }
  let socketDir = join(resolve(dataDir), 'socket');
  let temporary = false;
  if (join(socketDir, SOCKET_FILE).length > SOCKET_PATH_MAX) {
    socketDir = await mkdtemp(join(tmpdir(), 'identity-pg-'));
    temporary = true;
  } else {
    await mkdir(socketDir, { recursive: true, mode: 0o700 });
    await chmod(socketDir, 0o700);
    // A socket a killed process left behind: the data directory's lock is ours, so nobody serves it.
    await rm(join(socketDir, SOCKET_FILE), { force: true });
  }
  const server = new PGLiteSocketServer({ db, path: join(socketDir, SOCKET_FILE), maxConnections: 1 });
  try {
    await server.start();
  } catch (error) {
    if (temporary) await rm(socketDir, { recursive: true, force: true });
    throw error;
  }
  return {
    // The host is the socket's directory (percent-encoded), as libpq and node-postgres read it.
    url: `postgresql://postgres:postgres@${encodeURIComponent(socketDir)}:5432/postgres`,
    async stop() {
      await server.stop();
      await rm(temporary ? socketDir : join(socketDir, SOCKET_FILE), { recursive: true, force: true });
    },
  };
}

/**
 * PGlite over `dir` (closed to other users), or an error that says which directory and what to check: PGlite's own
 * ("PGlite failed to initialize properly", "Aborted()", or no message at all) names neither.
 */
async function openPGlite(dir: string): Promise<PGlite> {
  try {
    // PGlite writes its files readable and writable by everyone (0666): the directory, open to this
    // user only, is what keeps other local users from reading password hashes and sessions or writing
    // themselves an API key. Made so, or narrowed when an older start left it open.
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
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

/** The data directories this process holds: a lock naming our own pid is ours only if listed here. */
const held = new Set<string>();

/**
 * One process at a time on a data directory. PGlite keeps no lock of its own, and a second process
 * on the same directory (`npm run cli` beside a running `npm start`) writes behind the first one's
 * back: the two lose each other's writes, or leave a directory that no longer opens. The lock is a
 * file holding the owner's pid (and, where /proc tells it, when that process started), made
 * exclusively; one whose process is gone (killed) is taken over. A pid alone is not enough: after a
 * kill, a container's server is pid 1 again and would find itself named, and after a reboot the pid
 * may be any other process's. So a lock naming this very process, or a process that started at
 * another time than the owner did, is stale too.
 *
 * Two processes can find one stale lock at the same instant. Each removes only the lock it judged
 * stale, and only while it holds the takeover guard (`takeOverStaleLock`): otherwise the slower one
 * would remove the lock the faster one had just made, and both would open the directory.
 * `beforeTakeover` lets a test stop one contender between judging and removing.
 */
export async function lockDataDir(dataDir: string, hooks: { beforeTakeover?: () => Promise<void> } = {}): Promise<() => Promise<void>> {
  const path = join(resolve(dataDir), 'embedded.pid');
  // Written whole under a name of its own, then linked into place: the lock never exists empty.
  // (Per call, not per process: a test runs two contenders in one process.)
  const mine = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const started = await processStart(process.pid);
  await writeFile(mine, started === null ? String(process.pid) : `${process.pid} ${started}`);
  try {
    for (;;) {
      try {
        await link(mine, path);
        held.add(path);
        return async () => {
          held.delete(path);
          await rm(path, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const stale = await readLock(path);
      const owner = stale === null ? null : parseOwner(stale);
      if (owner !== null && (await ownerAlive(owner, path))) {
        throw new OperatorError(
          `DATA_DIR ${resolve(dataDir)} is in use by process ${owner.pid} (a running server?): stop it first, ` +
            `or delete ${path} if no such process uses it`,
        );
      }
      if (stale !== null) {
        await hooks.beforeTakeover?.();
        await takeOverStaleLock(path, mine, stale);
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
}

/**
 * Removes the lock at `path` if it still reads `stale`, under a guard file made exclusively as the
 * lock is: a contender that judged the same lock stale finds the guard taken, or, once it is free,
 * the lock changed, and removes nothing. A guard whose process died between taking and freeing it
 * is removed as a stale lock is (two processes doing that at one instant, after such a death, is
 * the one race left).
 */
async function takeOverStaleLock(path: string, mine: string, stale: string): Promise<void> {
  const guard = `${path}.takeover`;
  try {
    await link(mine, guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const text = await readLock(guard);
    const holder = text === null ? null : parseOwner(text);
    if (holder !== null && (await ownerAlive(holder, guard))) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    } else {
      await rm(guard, { force: true });
    }
    return;
  }
  held.add(guard);
  try {
    if ((await readLock(path)) === stale) await rm(path, { force: true });
  } finally {
    held.delete(guard);
    await rm(guard, { force: true });
  }
}

interface LockOwner {
  pid: number;
  /** When the owner started (/proc/<pid>/stat's starttime), when the lock says. */
  started: string | null;
}

/** A lock file's text, or null when it is gone. */
async function readLock(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The owner a lock file's text names, or null when it names none. */
function parseOwner(text: string): LockOwner | null {
  const [pidText = '', started] = text.trim().split(/\s+/);
  const pid = Number.parseInt(pidText, 10);
  return Number.isInteger(pid) && pid > 0 ? { pid, started: started ?? null } : null;
}

/** Whether the process a lock names still runs: the same process, not a later one given its pid. */
async function ownerAlive(owner: LockOwner, path: string): Promise<boolean> {
  if (owner.pid === process.pid) return held.has(path);
  if (!processExists(owner.pid)) return false;
  if (owner.started === null) return true;
  const started = await processStart(owner.pid);
  return started === null || started === owner.started;
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

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or null where
 * there is no /proc (macOS) or the process is gone. The command name (field 2) may hold spaces and
 * parentheses, so the fields are counted after its closing one.
 */
async function processStart(pid: number): Promise<string | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return null;
    throw error;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

export function embeddedDataPath(dataDir: string): string {
  return join(resolve(dataDir), 'pgdata');
}
