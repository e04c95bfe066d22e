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

export function hashPassword(password: string): Promise<string> {
  return hashingSlots(() => argon2.hash(normalizePassword(password), PARAMS));
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

/** True when a stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, PARAMS);
}
