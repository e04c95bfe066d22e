import { dictionary } from '@zxcvbn-ts/language-common';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { AppError } from '../../core/errors.ts';
import { normalizePassword, PASSWORD_MAX, PASSWORD_MIN } from '../../core/passwords.ts';

/**
 * The spec's rule: 8 to 128 characters, no composition rules, every character counts (no
 * truncation). With REJECT_COMMON_PASSWORDS a deployment adds NIST SP 800-63B's blocklist: no password
 * from a list of ~49,000 commonly used ones (zxcvbn-ts's list).
 */
const COMMON = new Set<string>((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

export function isCommonPassword(password: string): boolean {
  return COMMON.has(normalizePassword(password).toLowerCase());
}

/**
 * A new password (creation, reset, change), taken in the form it is hashed in (NFKC, see
 * `normalizePassword`): its length is counted there, in code points, before anything is hashed.
 */
export const newPasswordInput = z
  .string()
  .overwrite(normalizePassword)
  .min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);

/**
 * The deployment's blocklist, for a new password that passed `newPasswordInput`: 400 naming the field
 * when REJECT_COMMON_PASSWORDS is on and the password is on the list. Called where a password is set,
 * before anything else is done with it.
 */
export function assertPasswordAllowed(config: Pick<Config, 'REJECT_COMMON_PASSWORDS'>, password: string | undefined, path: string): void {
  if (password === undefined || !config.REJECT_COMMON_PASSWORDS || !isCommonPassword(password)) return;
  throw new AppError('BAD_REQUEST', 'The request is invalid', {
    details: [{ path, message: 'is one of the most commonly used passwords; choose one that is harder to guess' }],
  });
}

/** A password being checked (sign-in, current password): no policy, but nothing longer than any valid one. */
export const presentedPasswordInput = z.string().min(1, 'is required').max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);
