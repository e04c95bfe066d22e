import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { importJWK, type JWK } from 'jose';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../../core/clock.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { newId } from '../../core/ids.ts';
import { SigningKey } from './signing-key.entity.ts';

/** Ed25519: the fastest signature to make and check in Node (see docs/decisions.md). */
export const ACCESS_TOKEN_ALG = 'EdDSA';
/** OpenID Connect requires RS256 for id_tokens; the authorization server signs with these. */
export const ID_TOKEN_ALG = 'RS256';

export type SigningAlg = typeof ACCESS_TOKEN_ALG | typeof ID_TOKEN_ALG;
const ALGS: readonly SigningAlg[] = [ACCESS_TOKEN_ALG, ID_TOKEN_ALG];

/** How often each instance reloads the keys it signs with, so another instance's rotation reaches it. */
const ACTIVE_REFRESH_MS = 60_000;
/**
 * A new key of either algorithm is published this long before anything is signed with it; the key it
 * replaces signs meanwhile. Relying parties and APIs cache the JWKS (ours says max-age=60; jose's
 * remote key set and openid-client look again for an unknown `kid` only after 30 to 60 seconds), so a
 * token signed with a key minutes old would be refused by them meanwhile.
 */
const PREPUBLISH_MS = 5 * 60_000;
/**
 * A retired key stays published this long past the access-token lifetime: it may still sign for the
 * pre-publication time, plus the refresh above, plus slack for clocks.
 */
const PUBLISH_MARGIN_MS = PREPUBLISH_MS + 5 * 60_000;
/**
 * A retired id_token key stays published a day longer: relying parties keep id_tokens to send back as
 * `id_token_hint` (sign-out, silent sign-in) long after they expire, and the hint is checked with it.
 */
const ID_TOKEN_HINT_WINDOW_MS = 24 * 60 * 60_000;

/** Signs a token's claims (the service's and custom) as a compact JWS with the active key. */
export type AccessTokenSigner = (claims: Record<string, unknown>) => string;

/**
 * The key to sign access tokens with, as a synchronous signer: fast-jwt signs with node:crypto on the
 * calling thread, where jose goes through WebCrypto's thread pool and took twice the CPU for each
 * token (docs/decisions.md). Public keys stay WebCrypto CryptoKeys, which jose verifies with directly;
 * handing it a node KeyObject instead costs a conversion on every check.
 */
interface ActiveKey {
  kid: string;
  createdAt: Date;
  privateKey: KeyObject;
  sign: AccessTokenSigner;
}

export type PublicJwk = Record<string, unknown> & { kid: string; alg: string; use: 'sig' };
/** A published id_token key, as the authorization server signs and checks with it. */
export interface IdTokenKey {
  kid: string;
  createdAt: Date;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/**
 * The token-signing keys, kept in the database (private halves sealed under the master key) so every
 * instance signs and verifies with the same set: an Ed25519 key for the service's access tokens and
 * an RSA key for OpenID Connect id_tokens, both published in the one JWKS. Rotation retires the
 * current key of an algorithm; it stays in the JWKS until every token it signed has expired.
 */
export class SigningKeys {
  /** Published access-token keys, newest first. */
  private accessKeys: readonly ActiveKey[] = [];
  private idTokenKeys: readonly IdTokenKey[] = [];
  private reloading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly publicKeys = new Map<string, CryptoKey>();

  constructor(
    private readonly orm: MikroORM,
    private readonly box: CryptoBox,
    private readonly clock: Clock,
    private readonly accessTokenTtlSeconds: number,
    private readonly onError: (error: unknown) => void,
    private readonly refreshMs = ACTIVE_REFRESH_MS,
  ) {}

  /**
   * Reloads the key to sign with on a timer, off every request's path (a request may hold the
   * embedded database's only connection). On a timer rather than when a request finds the key old: an
   * instance that signed nothing for longer than a retired key stays published would otherwise sign
   * its next token with a key no longer in the JWKS.
   */
  start(): void {
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.reloading;
  }

  private refresh(): Promise<void> {
    this.reloading ??= this.reload()
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.reloading = null;
      });
    return this.reloading;
  }

  /**
   * Makes the first key of each algorithm when there is none (safe when several instances start at
   * once), and loads the access-token key.
   */
  async ensureActiveKey(): Promise<void> {
    await this.orm.em.fork().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?)', [727_002]);
      for (const alg of ALGS) {
        if ((await em.count(SigningKey, { retiredAt: null, alg })) === 0) em.persist(this.generate(alg));
      }
    });
    await this.reload();
  }

  /**
   * Retires the active key of an algorithm and makes a new one, published at once and signing once
   * published `PREPUBLISH_MS` (the retired one signs meanwhile); answers the new `kid`.
   */
  async rotate(alg: SigningAlg = ACCESS_TOKEN_ALG): Promise<string> {
    const fresh = this.generate(alg);
    await this.orm.em.fork().transactional(async (em) => {
      await em.execute('select pg_advisory_xact_lock(?)', [727_002]);
      await em.nativeUpdate(SigningKey, { retiredAt: null, alg }, { retiredAt: this.clock.now() });
      em.persist(fresh);
    });
    await this.reload();
    return fresh.id;
  }

  /**
   * The published id_token keys as last loaded, the one to sign with first: the newest that has been
   * published `PREPUBLISH_MS`, or while none has, the one published longest (on a first start, the
   * only one); then the others newest first. The authorization server reads them on every signature and every check of an
   * `id_token_hint` (oauth/id-token-keys.ts), so a rotation reaches it with the reload, not at a restart.
   */
  idTokenSigners(): IdTokenKey[] {
    const signer = this.settled(this.idTokenKeys);
    return signer ? [signer, ...this.idTokenKeys.filter((k) => k !== signer)] : [];
  }

  /**
   * The access-token key to sign with, as last loaded (`start` keeps them within a minute of the
   * database's): the newest published `PREPUBLISH_MS`, as for id_tokens.
   */
  async signingKey(): Promise<ActiveKey> {
    const key = this.settled(this.accessKeys);
    if (!key) throw new Error('no active signing key: ensureActiveKey() was not called');
    return key;
  }

  /** Of keys listed newest first: the newest published long enough, else the oldest (a first start's only key). */
  private settled<K extends { createdAt: Date }>(keys: readonly K[]): K | undefined {
    const settled = this.clock.now().getTime() - PREPUBLISH_MS;
    return keys.find((k) => k.createdAt.getTime() <= settled) ?? keys.at(-1);
  }

  private async reload(): Promise<void> {
    const rows = await this.orm.em.fork().find(SigningKey, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
    if (!rows.some((row) => row.alg === ACCESS_TOKEN_ALG && row.retiredAt === null)) throw new Error('no active signing key');
    this.accessKeys = this.loadKeys(rows, ACCESS_TOKEN_ALG, this.accessKeys, (row, privateKey) => {
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      const sign = createSigner({ key: pem, algorithm: ACCESS_TOKEN_ALG, kid: row.id, header: { alg: ACCESS_TOKEN_ALG, typ: 'at+jwt' } });
      return { kid: row.id, createdAt: row.createdAt, privateKey, sign };
    });
    this.idTokenKeys = this.loadKeys(rows, ID_TOKEN_ALG, this.idTokenKeys, (row, privateKey) => ({
      kid: row.id,
      createdAt: row.createdAt,
      privateKey,
      publicKey: createPublicKey(privateKey),
    }));
  }

  /**
   * The published keys of an algorithm, newest first (as `rows` come), made with `make` from their
   * opened private halves; a key already loaded is reused (a kid's key never changes).
   */
  private loadKeys<K extends { kid: string }>(
    rows: SigningKey[],
    alg: SigningAlg,
    loaded: readonly K[],
    make: (row: SigningKey, privateKey: KeyObject) => K,
  ): K[] {
    const known = new Map(loaded.map((k) => [k.kid, k]));
    return rows
      .filter((row) => row.alg === alg && this.isPublished(row))
      .map(
        (row) =>
          known.get(row.id) ?? make(row, createPrivateKey({ key: JSON.parse(this.box.open(row.privateJwk)) as JsonWebKey, format: 'jwk' })),
      );
  }

  /**
   * The public key for an access token's `kid`, or null when there is no such (published) key. An
   * id_token key never verifies an access token. Cached: keys never change.
   */
  async verificationKey(kid: string): Promise<CryptoKey | null> {
    const cached = this.publicKeys.get(kid);
    if (cached) return cached;
    const key = await this.orm.em.fork().findOne(SigningKey, { id: kid, alg: ACCESS_TOKEN_ALG });
    if (!key || !this.isPublished(key)) return null;
    const publicKey = (await importJWK(key.publicJwk as JWK, key.alg)) as CryptoKey;
    this.publicKeys.set(kid, publicKey);
    return publicKey;
  }

  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const keys = await this.orm.em.fork().find(SigningKey, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
    return {
      keys: keys.filter((k) => this.isPublished(k)).map((k) => ({ ...k.publicJwk, kid: k.id, alg: k.alg, use: 'sig' as const })),
    };
  }

  private isPublished(key: SigningKey): boolean {
    if (!key.retiredAt) return true;
    const margin = PUBLISH_MARGIN_MS + (key.alg === ID_TOKEN_ALG ? ID_TOKEN_HINT_WINDOW_MS : 0);
    return key.retiredAt.getTime() + this.accessTokenTtlSeconds * 1000 + margin > this.clock.now().getTime();
  }

  private generate(alg: SigningAlg): SigningKey {
    const { publicKey, privateKey } =
      alg === ID_TOKEN_ALG ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
    return Object.assign(new SigningKey(), {
      id: newId('sgk'),
      alg,
      publicJwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
      privateJwk: this.box.seal(JSON.stringify(privateKey.export({ format: 'jwk' }))),
      createdAt: this.clock.now(),
      retiredAt: null,
    });
  }
}
