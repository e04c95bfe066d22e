import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.ts';
import { systemClock, type Clock } from '../../core/clock.ts';
import { CryptoBox, loadMasterKey, previousMasterKeys } from '../../core/crypto-box.ts';
import type { Logger } from '../../core/logger.ts';
import { SigningKeys } from './signing-keys.ts';

/**
 * The master key's box and the token-signing keys, a key of each algorithm ensured: the server's
 * (`createDeps`, which then starts their reloads) and the CLI's keys commands', which need nothing else.
 */
export async function openSigningKeys(
  config: Config,
  orm: MikroORM,
  log: Logger,
  clock: Clock = systemClock,
): Promise<{ box: CryptoBox; keys: SigningKeys }> {
  const box = new CryptoBox(
    await loadMasterKey(config.VAULT_MASTER_KEY, config.DATA_DIR),
    previousMasterKeys(config.VAULT_MASTER_KEY_PREVIOUS),
  );
  const keys = new SigningKeys(orm, box, clock, config.ACCESS_TOKEN_TTL, (error) => log.error('signing key reload failed', { error }));
  await keys.ensureActiveKey();
  return { box, keys };
}
