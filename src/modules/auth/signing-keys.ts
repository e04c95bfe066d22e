import { generateKeyPairSync } from 'node:crypto';
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

/** How often each instance reloads the key it signs with, so another instance's rotation reaches it. */
const ACTIVE_REFRESH_MS = 60_000;
/** A retired key stays published this long past the access-token lifetime (covers the refresh above). */
const PUBLISH_MARGIN_MS = 5 * 60_000;
/**
 * A running authorization server keeps signing with the id_token key it started with until it is
 * restarted, so a retired id_token key stays published a day longer: restart within that day.
 */
const ID_TOKEN_RESTART_WINDOW_MS = 24 * 60 * 60_000;

/**
 * Keys are held as WebCrypto CryptoKeys, which jose uses directly; handing it a node KeyObject
 * instead costs a conversion on every signature (measured: most of the cost of a token check).
 */
interface ActiveKey {
  kid: string;
  privateKey: CryptoKey;
}

export type PublicJwk = Record<string, unknown> & { kid: string; alg: string; use: 'sig' };
/** A private JWK, for a signer that needs the key itself (oidc-provider's keystore). */
export type PrivateJwk = JWK & { kid: string; alg: string; use: 'sig' };

/**
 * The token-signing keys, kept in the database (private halves sealed under the master key) so every
 * instance signs and verifies with the same set: an Ed25519 key for the service's access tokens and
 * an RSA key for OpenID Connect id_tokens, both published in the one JWKS. Rotation retires the
 * current key of an algorithm; it stays in the JWKS until every token it signed has expired.
 */
export class SigningKeys {
  private active: ActiveKey | null = null;
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

  /** Retires the active key of an algorithm and makes a new one; answers the new `kid`. */
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
   * The published id_token keys with their private halves, the active one first (the one to sign
   * with), for oidc-provider's keystore. Read once when the authorization server starts.
   */
  async idTokenKeys(): Promise<PrivateJwk[]> {
    const keys = await this.orm.em.fork().find(SigningKey, { alg: ID_TOKEN_ALG }, { orderBy: { createdAt: 'desc' } });
    return keys
      .filter((k) => this.isPublished(k))
      .map((k) => ({ ...(JSON.parse(this.box.open(k.privateJwk)) as JWK), kid: k.id, alg: k.alg, use: 'sig' as const }));
  }

  /** The key to sign with, as last loaded (`start` keeps it within a minute of the database's). */
  async signingKey(): Promise<{ kid: string; privateKey: CryptoKey }> {
    if (!this.active) throw new Error('no active signing key: ensureActiveKey() was not called');
    return this.active;
  }

  private async reload(): Promise<void> {
    const key = await this.orm.em
      .fork()
      .findOne(SigningKey, { retiredAt: null, alg: ACCESS_TOKEN_ALG }, { orderBy: { createdAt: 'desc' } });
    if (!key) throw new Error('no active signing key');
    const jwk = JSON.parse(this.box.open(key.privateJwk)) as JWK;
    this.active = { kid: key.id, privateKey: (await importJWK(jwk, key.alg)) as CryptoKey };
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
    const keys = await this.orm.em.fork().find(SigningKey, {}, { orderBy: { createdAt: 'desc' } });
    return {
      keys: keys.filter((k) => this.isPublished(k)).map((k) => ({ ...k.publicJwk, kid: k.id, alg: k.alg, use: 'sig' as const })),
    };
  }

  private isPublished(key: SigningKey): boolean {
    if (!key.retiredAt) return true;
    const margin = PUBLISH_MARGIN_MS + (key.alg === ID_TOKEN_ALG ? ID_TOKEN_RESTART_WINDOW_MS : 0);
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
