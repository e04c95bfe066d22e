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

export function hashPassword(password: string): Promise<string> {
  return hashingSlots(() => argon2.hash(password, PARAMS));
}

export function verifyPassword(hash: string, password: string): Promise<boolean> {
  return hashingSlots(() => argon2.verify(hash, password));
}

/** True when a stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, PARAMS);
}
