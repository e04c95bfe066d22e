import { sign, type KeyObject } from 'node:crypto';
import { ExternalSigningKey } from 'oidc-provider';
import { ID_TOKEN_ALG, type SigningKeys } from '../modules/auth/signing-keys.ts';

/**
 * How many published id_token keys the authorization server's keystore holds: the one it signs with
 * and the retired ones still published (a day after each rotation), newest first. More rotations
 * than that within a day only stop the oldest retired keys from checking an `id_token_hint`. An
 * empty slot costs a comparison when a hint is checked.
 */
export const ID_TOKEN_KEY_SLOTS = 32;

/** The `kid` of a JWS signing input (`header.payload`), read from its protected header. */
function kidOf(signingInput: Uint8Array): string | undefined {
  const text = Buffer.from(signingInput).toString('latin1');
  const header: unknown = JSON.parse(Buffer.from(text.slice(0, text.indexOf('.')), 'base64url').toString('utf8'));
  return typeof header === 'object' && header !== null && 'kid' in header && typeof header.kid === 'string' ? header.kid : undefined;
}

/**
 * One place of oidc-provider's keystore, filled from `SigningKeys` as last reloaded rather than fixed
 * when the provider starts: slot 0 is the key to sign with (the provider signs with the first key
 * that fits), the others the retired ones still published. oidc-provider's keystore cannot be changed
 * once built, so a rotation used to reach an instance only when it restarted, and an instance left
 * running past the retired key's publication signed id_tokens that no relying party could check.
 * Through `ExternalSigningKey` (oidc-provider's hook for keys held elsewhere) every signature and
 * every check reads the keys the instance reloads each minute.
 */
export class IdTokenKeySlot extends ExternalSigningKey {
  constructor(
    private readonly keys: SigningKeys,
    private readonly slot: number,
  ) {
    super();
  }

  override get kid(): string {
    // An empty slot still needs a kid of its own (the provider refuses duplicates); no token names it.
    return this.keys.idTokenSigners()[this.slot]?.kid ?? `unused-id-token-slot-${this.slot}`;
  }

  override get alg(): string {
    return ID_TOKEN_ALG;
  }

  override keyObject(): KeyObject {
    // An empty slot answers with the signing key (the provider reads every slot's type once, at start).
    const signers = this.keys.idTokenSigners();
    const key = signers[this.slot] ?? signers[0];
    if (!key) throw new Error('no id_token signing key is loaded');
    return key.publicKey;
  }

  /**
   * Signs with the key the header names: the provider read this slot's `kid` just before, and a
   * reload in between must not pair that header with another key.
   */
  override sign(data: Uint8Array): Uint8Array {
    const kid = kidOf(data);
    const key = this.keys.idTokenSigners().find((k) => k.kid === kid);
    if (!key) throw new Error(`the id_token key ${String(kid)} is no longer published`);
    return sign('sha256', data, key.privateKey);
  }
}

/** The keystore of the authorization server: every slot, the active key's first. */
export function idTokenKeySlots(keys: SigningKeys): IdTokenKeySlot[] {
  return Array.from({ length: ID_TOKEN_KEY_SLOTS }, (_, slot) => new IdTokenKeySlot(keys, slot));
}
