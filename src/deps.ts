import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { AppDeps } from './core/context.ts';
import type { Logger } from './core/logger.ts';
import { createRateLimits } from './core/rate-limit.ts';
import { Metrics } from './core/metrics.ts';
import { detectStatementSupport } from './core/sql.ts';
import { Sweeper } from './core/sweeper.ts';
import { ActionSandbox } from './modules/actions/sandbox.ts';
import { openSigningKeys } from './modules/auth/open-signing-keys.ts';
import { EmailDispatcher } from './modules/email/dispatcher.ts';
import { createOAuthServer } from './oauth/provider.ts';
import { WebhookDispatcher } from './modules/webhooks/dispatcher.ts';
import { RoleLapses } from './modules/roles/lapses.ts';
import { SWEEPS } from './retention.ts';

/** Everything the process holds once, built the same way by main.ts, tests and the benchmark. */
export async function createDeps(input: {
  config: Config;
  orm: MikroORM;
  log: Logger;
  redis: Redis | null;
  clock?: Clock;
}): Promise<AppDeps> {
  const { config, orm, log, redis } = input;
  const clock = input.clock ?? systemClock;
  await detectStatementSupport(orm);
  const { box, keys } = await openSigningKeys(config, orm, log, clock);
  keys.start();
  const metrics = new Metrics(orm);
  const oauth = await createOAuthServer({ config, orm, log, keys, box });
  const webhooks = new WebhookDispatcher(orm, box, clock, log, {
    allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    httpsOnly: config.NODE_ENV === 'production',
  });
  webhooks.start();
  const mailer = new EmailDispatcher(orm, log, config.SMTP_URL, config.MAIL_FROM);
  mailer.start();
  const sweeper = new Sweeper(orm, clock, log, SWEEPS);
  sweeper.start();
  const roleLapses = new RoleLapses(orm, clock, log, () => webhooks.kick());
  roleLapses.start();
  return {
    config,
    orm,
    log,
    redis,
    clock,
    box,
    keys,
    mailer,
    oauth,
    webhooks,
    sweeper,
    roleLapses,
    metrics,
    sandbox: new ActionSandbox({ timeoutMs: config.ACTION_TIMEOUT_MS, memoryMb: config.ACTION_MEMORY_MB, log }),
    rateLimits: createRateLimits(
      redis,
      config.RATE_LIMIT_PREFIX,
      (error) => log.warn('rate-limit flush failed', { error }),
      (name) => metrics.rateLimited(name),
    ),
  };
}

export async function closeDeps(deps: AppDeps): Promise<void> {
  await deps.sweeper.stop();
  await deps.roleLapses.stop();
  await deps.keys.stop();
  await deps.webhooks.stop();
  await deps.mailer.stop();
  await deps.rateLimits.close();
  await deps.sandbox.close();
}
