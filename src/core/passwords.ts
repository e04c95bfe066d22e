import { AsyncLocalStorage } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import pLimit from 'p-limit';

/** Argon2id with OWASP's minimum parameters (m=19 MiB, t=2, p=1); hashes carry their parameters. */
const PARAMS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

/**
 * At most one Argon2id computation per core at a time; the rest wait their turn here. libuv's thread
 * pool (four threads) would otherwise run four 19 MiB hashes on two cores: each is slower by the
 * time-slicing and the cache they evict from one another (sign-in 49 → 57/s in the bench), and the
 * pool's other users (DNS lookups, files) find every thread busy.
 */
export const hashingSlots = pLimit(Math.max(1, availableParallelism()));

/**
 * The form a password is hashed in: Unicode NFKC (NIST SP 800-63B 5.1.1.2), so the same password
 * typed where the keyboard composes accents (NFC), where it decomposes them (NFD, macOS file names,
 * some mobile keyboards) or in fullwidth forms (East Asian input methods) is one password. Spaces
 * and case are kept.
 */
export function normalizePassword(password: string): string {
  return password.normalize('NFKC');
}

/** Hashes made ahead of a transaction (`withPasswordsHashed`), by the normalised password they are of. */
const hashedAhead = new AsyncLocalStorage<ReadonlyMap<string, Promise<string>>>();

export function hashPassword(password: string): Promise<string> {
  const normalized = normalizePassword(password);
  return hashedAhead.getStore()?.get(normalized) ?? hashingSlots(() => argon2.hash(normalized, PARAMS));
}

/**
 * Hashes `passwords` now, then runs `run`, inside which `hashPassword` of one of them answers with its
 * hash at once. A mutation's transaction holds a database connection from BEGIN to COMMIT; a password
 * hashed inside it kept that connection through the wait for a hashing slot and the 20-50 ms of
 * Argon2id, so a burst of user creations held the whole pool (and, on the embedded database's single
 * connection, made every other request wait out each hash). Hashed first, the connection is held only
 * for the writes.
 */
export async function withPasswordsHashed<T>(passwords: readonly string[], run: () => Promise<T>): Promise<T> {
  const ready = new Map(passwords.map((password) => [normalizePassword(password), hashPassword(password)] as const));
  await Promise.all(ready.values());
  return hashedAhead.run(ready, run);
}

/**
 * How a presented password matched a stored hash: `current` in its normalised form, `legacy` only as
 * typed (a hash made before passwords were normalised: the caller should store a new hash), `false`
 * not at all. The password as typed is tried only when normalising changed it.
 */
export type PasswordMatch = 'current' | 'legacy' | false;

export async function verifyPassword(hash: string, password: string): Promise<PasswordMatch> {
  const normalized = normalizePassword(password);
  if (await hashingSlots(() => argon2.verify(hash, normalized))) return 'current';
  if (normalized === password) return false;
  return (await hashingSlots(() => argon2.verify(hash, password))) ? 'legacy' : false;
}

/**
 * The new passwords a call's raw input holds at `paths` (`owner.password`), those a valid input could
 * hold: strings of PASSWORD_MIN to PASSWORD_MAX characters once normalised. Anything else is left for
 * the input's own check to refuse, unhashed.
 */
export function newPasswordsIn(rawInput: unknown, paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    const value = path
      .split('.')
      .reduce<unknown>((at, key) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined), rawInput);
    // Normalising can shrink a string (composing accents) but not by this much: a longer one is refused.
    if (typeof value !== 'string' || value.length > PASSWORD_MAX * 4) return [];
    const length = [...normalizePassword(value)].length;
    return length >= PASSWORD_MIN && length <= PASSWORD_MAX ? [value] : [];
  });
}

/** True when a stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, PARAMS);
}
