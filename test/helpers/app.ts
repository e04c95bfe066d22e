import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { MikroORM } from '@mikro-orm/postgresql';
import { inject } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { AppDeps } from '../../src/core/context.ts';
import { createLogger } from '../../src/core/logger.ts';
import { createRateLimits } from '../../src/core/rate-limit.ts';
import { connectRedis } from '../../src/core/redis.ts';
import { ormOptions } from '../../src/db/orm-config.ts';

export const PLATFORM_TOKEN = 'test-platform-token-0123456789';

export interface TestApp {
  url: string;
  deps: AppDeps;
  close(): Promise<void>;
}

/**
 * The whole service in-process on a free port, against the run's database (and REDIS_URL when set).
 * Each app gets its own rate-limit key space so files do not spend each other's budgets.
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'error',
    PLATFORM_API_TOKEN: PLATFORM_TOKEN,
    RATE_LIMIT_PREFIX: `test:${randomUUID()}`,
    DATABASE_URL: inject('databaseUrl'),
    // Vite sets BASE_URL=/ in every test process; the service's BASE_URL is a different thing.
    BASE_URL: '',
    ...env,
  });
  const orm = await MikroORM.init(ormOptions(config.DATABASE_URL as string, inject('embedded') ? 1 : 4));
  const log = createLogger(config.LOG_LEVEL);
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, log) : null;
  const deps: AppDeps = { config, orm, log, redis, rateLimits: createRateLimits(redis, config.RATE_LIMIT_PREFIX) };
  const server = buildApp(deps).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await orm.close(true);
      redis?.disconnect();
    },
  };
}
