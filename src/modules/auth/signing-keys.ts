import { createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { importJWK, type JWK } from 'jose';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../../core/clock.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { SigningKey } from './signing-key.entity.ts';
import { lockUntilCommit } from '../../core/advisory-locks.ts';

/** Ed25519: the fastest signature to make and check in Node (see docs/decisions.md). */
export const ACCESS_TOKEN_ALG = 'EdDSA';
/** OpenID Connect requires RS256 for id_tokens; the authorization server signs with these. */
export const ID_TOKEN_ALG = 'RS256';

export type SigningAlg = typeof ACCESS_TOKEN_ALG | typeof ID_TOKEN_ALG;
const ALGS: readonly SigningAlg[] = [ACCESS_TOKEN_ALG, ID_TOKEN_ALG];

/** How often each instance reloads the keys it signs with, so another instance's rotation reaches it. */
const ACTIVE_REFRESH_MS = 60_000;
/**
 * How often each instance asks whether the key set changed (one aggregate over the small
 * `signing_keys` table) and reloads when it did: every change reaches every instance within this, with
 * nothing added to any request's path. A revocation is acted on sooner, by the statements that precede
 * a token's check or signature (`catchUpWithRevocations`).
 */
const CHANGE_CHECK_MS = 5_000;
/**
 * A new key of either algorithm is published this long before anything is signed with it; the key it
 * replaces signs meanwhile. Relying parties and APIs cache the JWKS (ours says max-age=60; jose's
 * remote key set and openid-client look again for an unknown `kid` only after 30 to 60 seconds), so a
 * token signed with a key minutes old would be refused by them meanwhile.
 */
const PREPUBLISH_MS = 5 * 60_000;
/**
 * How long others may cache the JWKS (its Cache-Control max-age): well inside `PREPUBLISH_MS`, so a
 * cached copy holds a new key before it signs, and the bound on how long a revoked key stays in a
 * cache that honours the header.
 */
export const JWKS_MAX_AGE_SECONDS = 60;
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
  activatedAt: Date;
  privateKey: KeyObject;
  sign: AccessTokenSigner;
}

export type PublicJwk = Record<string, unknown> & { kid: string; alg: string; use: 'sig' };
/** A published id_token key, as the authorization server signs and checks with it. */
export interface IdTokenKey {
  kid: string;
  createdAt: Date;
  activatedAt: Date;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** What `revoke` did: the kid revoked, when, and the kid its algorithm signs with from now on. */
export interface RevokedKey {
  kid: string;
  alg: SigningAlg;
  revokedAt: Date;
  alreadyRevoked: boolean;
  signingKid: string | null;
}

/** A key as `keys list` shows it. */
export interface KeyListing {
  kid: string;
  alg: string;
  use: 'sig';
  createdAt: Date;
  activatedAt: Date;
  retiredAt: Date | null;
  revokedAt: Date | null;
  published: boolean;
  signing: boolean;
}

/**
 * The token-signing keys, kept in the database (private halves sealed under the master key) so every
 * instance signs and verifies with the same set: an Ed25519 key for the service's access tokens and
 * an RSA key for OpenID Connect id_tokens, both published in the one JWKS. Rotation retires the
 * current key of an algorithm; it stays in the JWKS until every token it signed has expired.
 * Revocation (a leaked key) takes a key out of the JWKS and out of verification at once.
 */
export class SigningKeys {
  /** Published access-token keys, newest first. */
  private accessKeys: readonly ActiveKey[] = [];
  private idTokenKeys: readonly IdTokenKey[] = [];
  private reloading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly publicKeys = new Map<string, CryptoKey>();
  /** Every revoked kid as last loaded: checked before a cached public key or verified token is trusted. */
  private revoked: ReadonlySet<string> = new Set();
  /** What the change check last read (`stamp`), to tell whether another instance changed the keys. */
  private stamp: string | null = null;
  private checker: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly orm: MikroORM,
    private readonly box: CryptoBox,
    private readonly clock: Clock,
    private readonly accessTokenTtlSeconds: number,
    private readonly onError: (error: unknown) => void,
    private readonly refreshMs = ACTIVE_REFRESH_MS,
    private readonly checkMs = CHANGE_CHECK_MS,
  ) {}

  /**
   * Reloads the key to sign with on a timer, off every request's path (a request may hold the
   * embedded database's only connection). On a timer rather than when a request finds the key old: an
   * instance that signed nothing for longer than a retired key stays published would otherwise sign
   * its next token with a key no longer in the JWKS.
   */
  start(): void {
    this.timer ??= setInterval(() => void this.refresh(), this.refreshMs).unref();
    this.checker ??= setInterval(() => this.checkForChanges(), this.checkMs).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.checker) clearInterval(this.checker);
    this.timer = null;
    this.checker = null;
    await this.checking;
    await this.reloading;
  }

  /** Reloads when the key set differs from the one last loaded (another instance or the CLI changed it). */
  private checkForChanges(): void {
    this.checking ??= this.readStamp()
      .then((stamp) => (stamp === this.stamp ? undefined : this.refresh()))
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.checking = null;
      });
  }

  /**
   * A digest of every key's state (a row is never deleted; only its activation, retirement and
   * revocation change), so any change shows, whatever the clocks that stamped it. The table holds a
   * few rows per rotation: cheap to read every few seconds.
   */
  private async readStamp(): Promise<string> {
    const [row] = await this.orm.em
      .fork()
      .execute<{ stamp: string | null }[]>(
        `select md5(string_agg(concat_ws('/', id, activated_at, retired_at, revoked_at), ',' order by id)) as stamp from signing_keys`,
      );
    return row?.stamp ?? '';
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
      await lockUntilCommit(em, 'signingKeys');
      for (const alg of ALGS) {
        // Nothing has been signed yet with this algorithm (a first start): the key signs at once.
        if ((await em.count(SigningKey, { retiredAt: null, alg })) === 0) em.persist(this.generate(alg, this.clock.now()));
      }
    });
    await this.reload();
  }

  /**
   * Retires the active key of an algorithm and makes a new one, published at once and signing once
   * published `PREPUBLISH_MS` (the retired one signs meanwhile); answers the new `kid`.
   */
  async rotate(alg: SigningAlg = ACCESS_TOKEN_ALG): Promise<string> {
    const fresh = this.generate(alg, new Date(this.clock.now().getTime() + PREPUBLISH_MS));
    await this.orm.em.fork().transactional(async (em) => {
      await lockUntilCommit(em, 'signingKeys');
      await em.nativeUpdate(SigningKey, { retiredAt: null, alg }, { retiredAt: this.clock.now() });
      em.persist(fresh);
    });
    await this.reload();
    return fresh.id;
  }

  /**
   * Revokes a key (a leaked one): from now on no instance publishes it, accepts its access tokens,
   * signs an access token or id_token with it or takes it in an `id_token_hint`
   * (`catchUpWithRevocations`). When it was the key its algorithm signs with, another signs at once rather than 5 minutes later: a rotation's
   * pre-published key, else a fresh key. APIs holding a cached JWKS refuse the fresh key's tokens
   * until they fetch it again, the price of not signing another token with a leaked key. NOT_FOUND
   * for a kid no key has; revoking a key again changes nothing.
   */
  async revoke(kid: string): Promise<RevokedKey> {
    const done = await this.orm.em.fork().transactional(async (em) => {
      await lockUntilCommit(em, 'signingKeys');
      const key = await em.findOne(SigningKey, { id: kid });
      const alg = ALGS.find((known) => known === key?.alg);
      if (!key || !alg) throw new AppError('NOT_FOUND', `No signing key has the kid ${kid}`);
      if (key.revokedAt) return { alg, revokedAt: key.revokedAt, alreadyRevoked: true };
      const now = this.clock.now();
      const siblings = await em.find(SigningKey, { alg }, { orderBy: { createdAt: 'desc', id: 'desc' } });
      const signing = this.settled(siblings.filter((k) => this.isPublished(k)))?.id === key.id;
      key.revokedAt = now;
      const successor = siblings.find((k) => k.retiredAt === null && k !== key);
      if (key.retiredAt === null || !successor) {
        key.retiredAt ??= now;
        // Replacing a key that did not sign yet (a rotation's), the replacement waits as it would have.
        em.persist(this.generate(alg, signing ? now : new Date(now.getTime() + PREPUBLISH_MS)));
      } else if (signing && successor.activatedAt > now) {
        successor.activatedAt = now;
      }
      return { alg, revokedAt: now, alreadyRevoked: false };
    });
    await this.reload();
    const signer = done.alg === ACCESS_TOKEN_ALG ? this.settled(this.accessKeys) : this.idTokenSigners()[0];
    return { kid, ...done, signingKid: signer?.kid ?? null };
  }

  /** Every key, newest first, with what it does now: for an operator choosing what to rotate or revoke. */
  async list(): Promise<KeyListing[]> {
    const rows = await this.orm.em.fork().find(SigningKey, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
    const signers = new Set(ALGS.map((alg) => this.settled(rows.filter((row) => row.alg === alg && this.isPublished(row)))?.id));
    return rows.map((row) => ({
      kid: row.id,
      alg: row.alg,
      use: 'sig' as const,
      createdAt: row.createdAt,
      activatedAt: row.activatedAt,
      retiredAt: row.retiredAt,
      revokedAt: row.revokedAt,
      published: this.isPublished(row),
      signing: signers.has(row.id),
    }));
  }

  /**
   * The published id_token keys as last loaded, the one to sign with first (`settled`), then the
   * others newest first. The authorization server reads them on every signature and every check of an
   * `id_token_hint` (oauth/id-token-keys.ts), so a rotation or revocation reaches it with the reload,
   * not at a restart.
   */
  idTokenSigners(): IdTokenKey[] {
    const signer = this.settled(this.idTokenKeys);
    return signer ? [signer, ...this.idTokenKeys.filter((k) => k !== signer)] : [];
  }

  /**
   * The access-token key to sign with, as last loaded (`start` keeps them within a minute of the
   * database's, a revocation within `CHANGE_CHECK_MS`): chosen as for id_tokens.
   */
  async signingKey(): Promise<ActiveKey> {
    const key = this.settled(this.accessKeys);
    if (!key) throw new Error('no active signing key: ensureActiveKey() was not called');
    return key;
  }

  /**
   * Of published keys listed newest first: the one that began to sign last (its `activatedAt`, when
   * published `PREPUBLISH_MS`, or at once for a first start's key and a revoked key's replacement),
   * the newer of a tie; while none has, the one that begins soonest. By when a key began to sign, not
   * when it was made: a key whose start a revocation brought forward must not outrank a later one.
   */
  private settled<K extends { activatedAt: Date }>(keys: readonly K[]): K | undefined {
    const now = this.clock.now().getTime();
    let signing: K | undefined;
    let soonest: K | undefined;
    for (const key of keys) {
      const at = key.activatedAt.getTime();
      if (at <= now && (!signing || at > signing.activatedAt.getTime())) signing = key;
      if (!soonest || at < soonest.activatedAt.getTime()) soonest = key;
    }
    return signing ?? soonest;
  }

  private async reload(): Promise<void> {
    const stamp = await this.readStamp();
    const rows = await this.orm.em.fork().find(SigningKey, {}, { orderBy: { createdAt: 'desc', id: 'desc' } });
    if (!rows.some((row) => row.alg === ACCESS_TOKEN_ALG && row.retiredAt === null)) throw new Error('no active signing key');
    this.revoked = new Set(rows.filter((row) => row.revokedAt !== null).map((row) => row.id));
    for (const kid of this.revoked) this.publicKeys.delete(kid);
    this.accessKeys = this.loadKeys(rows, ACCESS_TOKEN_ALG, this.accessKeys, (row, privateKey) => {
      const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
      const sign = createSigner({ key: pem, algorithm: ACCESS_TOKEN_ALG, kid: row.id, header: { alg: ACCESS_TOKEN_ALG, typ: 'at+jwt' } });
      return { kid: row.id, createdAt: row.createdAt, activatedAt: row.activatedAt, privateKey, sign };
    });
    this.idTokenKeys = this.loadKeys(rows, ID_TOKEN_ALG, this.idTokenKeys, (row, privateKey) => ({
      kid: row.id,
      createdAt: row.createdAt,
      activatedAt: row.activatedAt,
      privateKey,
      publicKey: createPublicKey(privateKey),
    }));
    this.stamp = stamp;
  }

  /**
   * The published keys of an algorithm, newest first (as `rows` come), made with `make` from their
   * opened private halves; a key already loaded is reused (a kid's key never changes).
   */
  private loadKeys<K extends { kid: string; activatedAt: Date }>(
    rows: SigningKey[],
    alg: SigningAlg,
    loaded: readonly K[],
    make: (row: SigningKey, privateKey: KeyObject) => K,
  ): K[] {
    const known = new Map(loaded.map((k) => [k.kid, k]));
    return rows
      .filter((row) => row.alg === alg && this.isPublished(row))
      .map((row) => {
        const cached = known.get(row.id);
        // A revocation may bring a pre-published key's time to sign forward; nothing else changes.
        if (cached)
          return cached.activatedAt.getTime() === row.activatedAt.getTime() ? cached : { ...cached, activatedAt: row.activatedAt };
        return make(row, createPrivateKey({ key: JSON.parse(this.box.open(row.privateJwk)) as JsonWebKey, format: 'jwk' }));
      });
  }

  /**
   * Catches up with revocations committed elsewhere (the CLI) before a kid is judged or a token signed:
   * `revokedInDatabase` is how many keys the caller's own statement counted as revoked (the session
   * lookup of core/auth.ts, the session start and refresh of auth/sessions.service.ts, and the client
   * lookup oidc-provider makes before it signs an id_token or checks an `id_token_hint`,
   * oauth/adapter.ts), so no query is added. Another count than the set last loaded reloads the keys, a
   * second time when a reload already under way began before the revocation committed. Without it an
   * instance accepted a revoked key's tokens, and signed id_tokens with it, until its next change
   * check, up to `CHANGE_CHECK_MS`.
   */
  async catchUpWithRevocations(revokedInDatabase: number): Promise<void> {
    for (let attempt = 0; attempt < 2 && revokedInDatabase !== this.revoked.size; attempt += 1) await this.refresh();
  }

  /**
   * Whether `kid` was revoked, as last loaded: a set lookup, cheap enough for every request that
   * presents a token whose signature was checked before.
   */
  isRevoked(kid: string): boolean {
    return this.revoked.has(kid);
  }

  /**
   * The public key for an access token's `kid`, or null when there is no such (published) key. An
   * id_token key never verifies an access token. Cached: keys never change, except by revocation.
   */
  async verificationKey(kid: string): Promise<CryptoKey | null> {
    if (this.revoked.has(kid)) return null;
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
    if (key.revokedAt) return false;
    if (!key.retiredAt) return true;
    const margin = PUBLISH_MARGIN_MS + (key.alg === ID_TOKEN_ALG ? ID_TOKEN_HINT_WINDOW_MS : 0);
    return key.retiredAt.getTime() + this.accessTokenTtlSeconds * 1000 + margin > this.clock.now().getTime();
  }

  private generate(alg: SigningAlg, activatedAt: Date): SigningKey {
    const { publicKey, privateKey } =
      alg === ID_TOKEN_ALG ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ed25519');
    return Object.assign(new SigningKey(), {
      id: newId('sgk'),
      alg,
      publicJwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
      privateJwk: this.box.seal(JSON.stringify(privateKey.export({ format: 'jwk' }))),
      createdAt: this.clock.now(),
      activatedAt,
      retiredAt: null,
      revokedAt: null,
    });
  }
}
