import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './core/logger.ts';
import { openDatabase } from './db/database.ts';
import { closeDeps, createDeps } from './deps.ts';
import { rewrapAll } from './modules/vault/rewrap.ts';
import { createWorkspaceInput } from './modules/workspaces/workspaces.schema.ts';
import { createWorkspace } from './modules/workspaces/workspaces.service.ts';
import { ACCESS_TOKEN_ALG, ID_TOKEN_ALG } from './modules/auth/signing-keys.ts';
import { systemClock } from './core/clock.ts';
import { Sweeper } from './core/sweeper.ts';
import { SWEEPS } from './retention.ts';

const USAGE = `Usage:
  npm run cli -- migrate
  npm run cli -- keys rotate [--id-token]
  npm run cli -- keys rewrap     (after a master-key rotation: re-seal everything under VAULT_MASTER_KEY)
  npm run cli -- workspaces create --name NAME --owner-email EMAIL [--owner-password PASSWORD]
  npm run cli -- sweep          (delete what the retention rules keep no longer, as every server does hourly)

Uses DATABASE_URL, or the embedded database under DATA_DIR (stop the server first: it holds it).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const HELP_FLAGS = new Set(['--help', '-h', 'help']);

async function run(argv: string[]): Promise<void> {
  if (argv.some((arg) => HELP_FLAGS.has(arg))) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const [group, command, ...rest] = argv;
  const config = loadConfig(process.env);
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, (line) => process.stderr.write(line));

  if (group === 'migrate' && command === undefined) {
    const database = await openDatabase(
      config,
      createLogger('info', (line) => process.stderr.write(line)),
      { migrate: true },
    );
    await database.close();
    return;
  }

  if (group === 'keys' && command === 'rotate') {
    const { values } = parseArgs({ args: rest, options: { 'id-token': { type: 'boolean' } }, strict: true });
    const database = await openDatabase(config, log, { migrate: true });
    try {
      const deps = await createDeps({ config, orm: database.orm, log, redis: null });
      // Running servers reload keys every minute; a new key signs once published 5 minutes.
      const kid = await deps.keys.rotate(values['id-token'] ? ID_TOKEN_ALG : ACCESS_TOKEN_ALG);
      await closeDeps(deps);
      process.stdout.write(`${JSON.stringify({ kid })}\n`);
    } finally {
      await database.close();
    }
    return;
  }

  if (group === 'keys' && command === 'rewrap') {
    const database = await openDatabase(config, log, { migrate: true });
    try {
      const deps = await createDeps({ config, orm: database.orm, log, redis: null });
      const counts = await rewrapAll(database.orm, deps.box);
      await closeDeps(deps);
      process.stdout.write(`${JSON.stringify({ key_id: deps.box.keyId, rewrapped: counts })}\n`);
    } finally {
      await database.close();
    }
    return;
  }

  if (group === 'sweep' && command === undefined) {
    const database = await openDatabase(config, log, { migrate: true });
    try {
      const deleted = await new Sweeper(database.orm, systemClock, log, SWEEPS).sweep();
      process.stdout.write(`${JSON.stringify({ deleted })}\n`);
    } finally {
      await database.close();
    }
    return;
  }

  if (group === 'workspaces' && command === 'create') {
    const { values } = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, 'owner-email': { type: 'string' }, 'owner-password': { type: 'string' } },
      strict: true,
    });
    const parsed = createWorkspaceInput.safeParse({
      name: values.name,
      owner: { email: values['owner-email'], ...(values['owner-password'] ? { password: values['owner-password'] } : {}) },
    });
    if (!parsed.success) {
      fail(`Invalid arguments:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}\n\n${USAGE}`);
    }
    const database = await openDatabase(config, log, { migrate: true });
    try {
      const created = await database.orm.em
        .fork()
        .transactional((em) => createWorkspace(em, parsed.data, { ip: null, userAgent: 'cli', requestId: null }));
      process.stdout.write(`${JSON.stringify(created)}\n`);
    } finally {
      await database.close();
    }
    return;
  }

  fail(USAGE);
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError) fail(error.message);
  fail(`Failed: ${error instanceof Error ? error.message : String(error)}`);
});
