import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MikroORM } from '@mikro-orm/postgresql';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { answerClientError } from '../../src/core/http.ts';
import { loadConfig } from '../../src/config.ts';
import type { AppDeps } from '../../src/core/context.ts';
import { createLogger } from '../../src/core/logger.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { closeDeps, createDeps } from '../../src/deps.ts';
import { connectRedis } from '../../src/core/redis.ts';
import { ormOptions } from '../../src/db/orm-config.ts';
import { testDatabaseUrl } from './database.ts';

export const PLATFORM_TOKEN = 'test-platform-token-0123456789';
/** Every test app shares one database, so they share the key that seals secrets in it. */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64');

/**
 * On the embedded database the live apps of a test process share one ORM: its server takes a single
 * connection (PGlite is one backend, and named prepared statements would collide on it), so a second
 * app beside the first (a stricter configuration, say) would be refused its own.
 */
let embeddedOrm: { orm: Promise<MikroORM>; users: number } | null = null;

async function openOrm(url: string, poolSize: number | undefined): Promise<{ orm: MikroORM; release: () => Promise<void> }> {
  if (!inject('embedded') || url !== testDatabaseUrl()) {
    const orm = await MikroORM.init(ormOptions(url, poolSize ?? 4));
    return { orm, release: () => orm.close(true) };
  }
  embeddedOrm ??= { orm: MikroORM.init(ormOptions(url, 1)), users: 0 };
  const shared = embeddedOrm;
  shared.users += 1;
  return {
    orm: await shared.orm,
    async release() {
      shared.users -= 1;
      if (shared.users > 0) return;
      if (embeddedOrm === shared) embeddedOrm = null;
      await (await shared.orm).close(true);
    },
  };
}

export interface TestApp {
  url: string;
  deps: AppDeps;
  /** The app's clock: starts at the real time and moves only when a test moves it. */
  clock: ManualClock;
  close(): Promise<void>;
}

/**
 * The whole service in-process on a free port, against the run's database (and REDIS_URL when set).
 * Each app gets its own rate-limit key space so files do not spend each other's budgets. BASE_URL
 * (the OIDC issuer) is the app's real address unless a test chooses another.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: {
    poolSize?: number;
    /**
     * A host name for BASE_URL on the app's port (`http://dash.test:<port>`), which a browser reaches
     * through `launchChromium({ hostResolverRules })`; the app still listens on 127.0.0.1, `url`.
     */
    baseHost?: string;
    /** Receives every log line (JSON) instead of stdout, for tests that read what the service logs. */
    logLine?: (line: string) => void;
  } = {},
): Promise<TestApp> {
  const server = createServer();
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    PLATFORM_API_TOKEN: PLATFORM_TOKEN,
    VAULT_MASTER_KEY: TEST_MASTER_KEY,
    RATE_LIMIT_PREFIX: `test:${randomUUID()}`,
    TRUST_PROXY: 'loopback',
    DATABASE_URL: testDatabaseUrl(),
    // Vite sets BASE_URL=/ in every test process; the service's BASE_URL is a different thing.
    BASE_URL: options.baseHost ? `http://${options.baseHost}:${port}` : url,
    ...env,
  });
  const { orm, release } = await openOrm(config.DATABASE_URL as string, options.poolSize);
  const log = createLogger(config.LOG_LEVEL, options.logLine);
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, log) : null;
  const clock = new ManualClock();
  const deps = await createDeps({ config, orm, log, redis, clock });
  server.on('request', buildApp(deps));
  return {
    url,
    deps,
    clock,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeDeps(deps);
      await release();
      redis?.disconnect();
    },
  };
}
