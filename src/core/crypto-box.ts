import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { OperatorError } from './operator-error.ts';

/**
 * AES-256-GCM: base64url(iv) . base64url(tag) . base64url(ciphertext), prefixed `v1.`. `aad` binds
 * the ciphertext to its context (a vault object's id), so it cannot be moved to another row.
 */
export function sealWith(key: Buffer, plaintext: Buffer | string, aad?: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function openWith(key: Buffer, sealed: string, aad?: string): Buffer {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
}

/** A master key's public name: a digest of it, so rows can say which key wrapped them without revealing it. */
export function masterKeyId(key: Buffer): string {
  return createHash('sha256').update('identity-master-key:').update(key).digest('hex').slice(0, 16);
}

function derive(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), purpose, 32));
}

/** An envelope-encrypted value: the value under its own data key, the data key under a master key. */
export interface Envelope {
  ciphertext: string;
  wrappedKey: string;
  /** masterKeyId of the master key that wrapped the data key. */
  keyId: string;
}

/** A sealed secret that no configured master key opens. */
export class MasterKeyMismatchError extends OperatorError {
  override readonly name = 'MasterKeyMismatchError';

  constructor(keyId: string, cause: unknown) {
    super(
      `A secret in the database does not open with the master key in use (${keyId}): it was sealed under another one, or altered. ` +
        'Set VAULT_MASTER_KEY to the key the database was first used with (by default DATA_DIR/master.key of the instance that ' +
        'created it; every instance must share it), or name that key in VAULT_MASTER_KEY_PREVIOUS during a rotation.',
      { cause },
    );
  }
}

/**
 * Secrets at rest under the master key (VAULT_MASTER_KEY), for what must be read back: signing keys,
 * TOTP secrets and provider client secrets directly (`seal`/`open`), vault values by envelope
 * encryption (`sealEnvelope`).
 * Previous master keys (VAULT_MASTER_KEY_PREVIOUS) still open what they sealed, so the master key can
 * be rotated without downtime; `npm run cli -- keys rewrap` then moves everything to the current key.
 */
export class CryptoBox {
  private readonly previous: Map<string, Buffer>;
  readonly keyId: string;

  constructor(
    private readonly key: Buffer,
    previous: Buffer[] = [],
  ) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes');
    this.keyId = masterKeyId(key);
    this.previous = new Map(previous.filter((k) => !k.equals(key)).map((k) => [masterKeyId(k), k]));
  }

  seal(plaintext: string): string {
    return sealWith(this.key, plaintext);
  }

  /**
   * A 32-byte key for one purpose (cookie signing…), derived from the master key with HKDF: every
   * instance sharing the master key derives the same one, and it reveals nothing of the master key.
   */
  deriveKey(purpose: string): Buffer {
    return derive(this.key, purpose);
  }

  /**
   * The same purpose's key from the current master key first, then from each previous one: for
   * signers that verify with any key of a list (cookie keygrips), so a master-key rotation does not
   * end what was signed before it.
   */
  deriveKeys(purpose: string): Buffer[] {
    return [this.key, ...this.previous.values()].map((key) => derive(key, purpose));
  }

  /**
   * Opens with the current key, else with a previous one (a value sealed before a rotation). A value
   * none of them opens was sealed under a master key this process was not given (a second instance
   * without the shared VAULT_MASTER_KEY, a DATA_DIR/master.key lost while the database was kept): the
   * error says so instead of the cipher's "unable to authenticate data".
   */
  open(sealed: string): string {
    try {
      return openWith(this.key, sealed).toString('utf8');
    } catch (error) {
      for (const key of this.previous.values()) {
        try {
          return openWith(key, sealed).toString('utf8');
        } catch {
          // Not this key either: try the next, and fail below.
          continue;
        }
      }
      throw new MasterKeyMismatchError(this.keyId, error);
    }
  }

  /** True when `sealed` opens with the current key (nothing to rewrap). */
  isCurrent(sealed: string): boolean {
    try {
      openWith(this.key, sealed);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Envelope encryption: a fresh 256-bit data key per value encrypts it (AES-256-GCM, bound to
   * `context`), and only that data key is sealed under the master key. Rotating the master key then
   * rewraps 32-byte keys, never the values.
   */
  sealEnvelope(plaintext: string, context: string): Envelope {
    const dataKey = randomBytes(32);
    try {
      return {
        ciphertext: sealWith(dataKey, plaintext, `value:${context}`),
        wrappedKey: sealWith(this.key, dataKey, `data-key:${context}`),
        keyId: this.keyId,
      };
    } finally {
      dataKey.fill(0);
    }
  }

  openEnvelope(envelope: Envelope, context: string): string {
    const dataKey = this.unwrap(envelope, context);
    try {
      return openWith(dataKey, envelope.ciphertext, `value:${context}`).toString('utf8');
    } finally {
      dataKey.fill(0);
    }
  }

  /** The same data key, wrapped under the current master key (the ciphertext does not change). */
  rewrapEnvelope(envelope: Envelope, context: string): Envelope {
    if (envelope.keyId === this.keyId) return envelope;
    const dataKey = this.unwrap(envelope, context);
    try {
      return { ciphertext: envelope.ciphertext, wrappedKey: sealWith(this.key, dataKey, `data-key:${context}`), keyId: this.keyId };
    } finally {
      dataKey.fill(0);
    }
  }

  private unwrap(envelope: Envelope, context: string): Buffer {
    const key = envelope.keyId === this.keyId ? this.key : this.previous.get(envelope.keyId);
    if (!key) throw new Error(`the master key ${envelope.keyId} that wrapped this value is not configured`);
    return openWith(key, envelope.wrappedKey, `data-key:${context}`);
  }
}

/**
 * VAULT_MASTER_KEY when set; otherwise one generated on first start and kept in DATA_DIR/master.key
 * (fine for one instance; several instances must share VAULT_MASTER_KEY).
 */
export async function loadMasterKey(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'base64');
  const dir = resolve(dataDir);
  const file = join(dir, 'master.key');
  const existing = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (existing) return Buffer.from(existing.trim(), 'base64');
  await mkdir(dir, { recursive: true });
  const key = randomBytes(32);
  await writeFile(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
}

/** VAULT_MASTER_KEY_PREVIOUS: comma-separated base64 keys that still open what they sealed. */
export function previousMasterKeys(configured: string | undefined): Buffer[] {
  return (configured ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => Buffer.from(k, 'base64'));
}
