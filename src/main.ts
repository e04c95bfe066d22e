import type { Server } from 'node:http';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { answerClientError } from './core/http.ts';
import { createLogger } from './core/logger.ts';
import { OperatorError } from './core/operator-error.ts';
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
  /**
   * Graceful shutdown, within 10 s: stop accepting connections, let in-flight requests finish (idle
   * keep-alive connections close now, busy ones after their answer), stop the dispatchers (a webhook
   * or email being sent completes and records its attempt), flush the rate-limit counts, close the
   * pools. Whatever still runs at 10 s is cut, and the process exits.
   */
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const deadline = setTimeout(() => {
      log.warn('shutdown took longer than 10 s; closing what is left');
      server.closeAllConnections();
    }, 9_000);
    deadline.unref();
    const drained = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 100);
    await drained;
    clearInterval(idle);
    clearTimeout(deadline);
    await closeDeps(deps);
    await database.close();
    await redis?.quit();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  // The operator's to mend: the message says how, alone. Anything else is ours: the stack helps.
  if (error instanceof OperatorError) process.stderr.write(`Start-up refused: ${error.message}\n`);
  else process.stderr.write(`Start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
