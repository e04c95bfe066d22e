import type { Server } from 'node:http';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { answerClientError } from './core/http.ts';
import { createLogger } from './core/logger.ts';
import { connectRedis } from './core/redis.ts';
import { openDatabase } from './db/database.ts';
import { closeDeps, createDeps } from './deps.ts';
import { bootstrapFirstWorkspace, printBootstrap } from './modules/workspaces/bootstrap.ts';

function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** config → database → redis → buildApp(deps) → listen; graceful shutdown on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = readConfig();
  const log = createLogger(config.LOG_LEVEL);
  const database = await openDatabase(config, log, { migrate: true });
  const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, log) : null;
  const deps = await createDeps({ config, orm: database.orm, log, redis });

  const created = await bootstrapFirstWorkspace(database.orm, config);
  if (created) printBootstrap(created, config, log);

  const app = buildApp(deps);
  const server: Server = app.listen(config.PORT, config.HOST, () => {
    log.info('listening', {
      url: config.BASE_URL,
      database: database.embedded ? `embedded (${config.DATA_DIR})` : 'postgresql',
      redis: redis ? 'redis' : 'in-process',
    });
  });

  server.on('clientError', answerClientError);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    server.close();
    server.closeIdleConnections();
    await closeDeps(deps);
    await database.close();
    redis?.disconnect();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
