import { parseArgs } from 'node:util';
import { loadConfig } from './config.ts';
import { createLogger } from './core/logger.ts';
import { OperatorError } from './core/operator-error.ts';
import { openDatabase } from './db/database.ts';
import { openSigningKeys } from './modules/auth/open-signing-keys.ts';
import { ACCESS_TOKEN_ALG, ID_TOKEN_ALG, type SigningKeys, type KeyListing } from './modules/auth/signing-keys.ts';
import { systemClock } from './core/clock.ts';
import { AppError } from './core/errors.ts';
import type { Logger } from './core/logger.ts';
import type { Config } from './config.ts';

// A command loads the modules it uses when it runs (`await import`): the whole server's (deps.ts:
// the OAuth provider, the dispatchers) takes seconds of CPU to load, which the keys commands, the
// help and a refused argument do not need.

const USAGE = `Usage:
  npm run cli -- migrate        (apply what is pending; prints {"applied": [names]}, [] when up to date)
  npm run cli -- keys list       (every token-signing key: kid, alg, dates, published, signing)
  npm run cli -- keys rotate [--id-token]
  npm run cli -- keys revoke KID (a leaked key: out of the JWKS and refused at once; a fresh key signs)
  npm run cli -- keys rewrap     (after a master-key rotation: re-seal everything under VAULT_MASTER_KEY)
  npm run cli -- workspaces create --name NAME --owner-email EMAIL [--owner-password PASSWORD]
  npm run cli -- sweep          (delete what the retention rules keep no longer, as every server does hourly)

Uses DATABASE_URL, or the embedded database under DATA_DIR (stop the server first: it holds it).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const HELP_FLAGS = new Set(['--help', '-h', 'help']);

/** The token-signing keys alone: the keys commands start no dispatcher, mailer or sweeper. */
async function withSigningKeys<T>(config: Config, log: Logger, use: (keys: SigningKeys) => Promise<T>): Promise<T> {
  const database = await openDatabase(config, log, { migrate: true });
  try {
    const { keys } = await openSigningKeys(config, database.orm, log);
    return await use(keys);
  } finally {
    await database.close();
  }
}

function listed(key: KeyListing): Record<string, unknown> {
  return {
    kid: key.kid,
    alg: key.alg,
    use: key.use,
    created_at: key.createdAt.toISOString(),
    activated_at: key.activatedAt.toISOString(),
    retired_at: key.retiredAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
    published: key.published,
    signing: key.signing,
  };
}

const REVOKED_NOTE = `Running servers stop publishing the key, accepting access tokens it signed, signing with it and accepting it in
an id_token_hint at once; no restart is needed.
APIs and relying parties that cached the JWKS may keep the revoked key up to a minute (its max-age), and refuse
tokens of a fresh key until they fetch the JWKS again.
`;

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
    // Also when there was nothing to do: silence would leave "did it run?" open.
    process.stdout.write(`${JSON.stringify({ applied: database.applied })}\n`);
    return;
  }

  if (group === 'keys' && command === 'list') {
    parseArgs({ args: rest, options: {}, strict: true });
    const keys = await withSigningKeys(config, log, (signing) => signing.list());
    process.stdout.write(`${JSON.stringify({ keys: keys.map(listed) })}\n`);
    return;
  }

  if (group === 'keys' && command === 'rotate') {
    const { values } = parseArgs({ args: rest, options: { 'id-token': { type: 'boolean' } }, strict: true });
    // Running servers reload keys every minute; a new key signs once published 5 minutes.
    const kid = await withSigningKeys(config, log, (keys) => keys.rotate(values['id-token'] ? ID_TOKEN_ALG : ACCESS_TOKEN_ALG));
    process.stdout.write(`${JSON.stringify({ kid })}\n`);
    return;
  }

  if (group === 'keys' && command === 'revoke') {
    const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true, strict: true });
    const [kid, ...extra] = positionals;
    if (!kid || extra.length > 0) fail(`Name one key: npm run cli -- keys revoke KID (npm run cli -- keys list shows them)\n\n${USAGE}`);
    try {
      const revoked = await withSigningKeys(config, log, (keys) => keys.revoke(kid));
      process.stdout.write(
        `${JSON.stringify({
          kid: revoked.kid,
          alg: revoked.alg,
          revoked_at: revoked.revokedAt.toISOString(),
          already_revoked: revoked.alreadyRevoked,
          signing_kid: revoked.signingKid,
        })}\n`,
      );
      process.stderr.write(REVOKED_NOTE);
    } catch (error) {
      if (error instanceof AppError && error.appCode === 'NOT_FOUND') fail(`${error.message} (npm run cli -- keys list shows them)`);
      throw error;
    }
    return;
  }

  if (group === 'keys' && command === 'rewrap') {
    const [{ createDeps, closeDeps }, { rewrapAll }] = await Promise.all([import('./deps.ts'), import('./modules/vault/rewrap.ts')]);
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
    const [{ Sweeper }, { SWEEPS }] = await Promise.all([import('./core/sweeper.ts'), import('./retention.ts')]);
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
    const [{ createWorkspaceInput }, { createWorkspace }] = await Promise.all([
      import('./modules/workspaces/workspaces.schema.ts'),
      import('./modules/workspaces/workspaces.service.ts'),
    ]);
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
  if (error instanceof OperatorError) fail(error.message);
  fail(`Failed: ${error instanceof Error ? error.message : String(error)}`);
});
