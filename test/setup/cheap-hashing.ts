import type * as Argon2 from 'argon2';
import { vi } from 'vitest';

/**
 * The in-process tests hash with cheap Argon2id (m=1 MiB, t=1) instead of the service's 19 MiB, t=2:
 * every user a test creates and every sign-in paid a full hash, most of those files' CPU. Still
 * argon2id, and a hash carries its parameters, so `verify` follows; `needsRehash` is asked against the
 * same cheap parameters, or every sign-in would store a new hash. Only `argon2` as the tests' process
 * imports it is replaced: spawned servers, the CLI and the bench hash with the service's parameters.
 *
 * A file that depends on the real parameters or on a hash's real cost opts out with
 * `vi.unmock('argon2')` at its top (src/core/passwords.test.ts, test/production-hashing.test.ts).
 */
vi.mock('argon2', async (importOriginal) => {
  const real = await importOriginal<typeof Argon2 & { default: typeof Argon2 }>();
  const argon2 = real.default;
  const cheap = { memoryCost: 1024, timeCost: 1 } as const;
  type Options = Parameters<typeof argon2.needsRehash>[1];
  const hash = ((password: string | Buffer, options?: Options) => argon2.hash(password, { ...options, ...cheap })) as typeof argon2.hash;
  const needsRehash = (digest: string, options?: Options) => argon2.needsRehash(digest, { ...options, ...cheap });
  return { ...real, hash, needsRehash, default: { ...argon2, hash, needsRehash } };
});
