import argon2 from 'argon2';

/** Argon2id with OWASP's minimum parameters (m=19 MiB, t=2, p=1); hashes carry their parameters. */
const PARAMS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, PARAMS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  return argon2.verify(hash, password);
}

/** True when a stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(hash: string): boolean {
  return argon2.needsRehash(hash, PARAMS);
}
