import { dictionary } from '@zxcvbn-ts/language-common';
import { z } from 'zod';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../core/passwords.ts';

/**
 * NIST SP 800-63B: 8 to 128 characters, no composition rules, every character counts (no
 * truncation), and no password from a list of ~49,000 commonly used ones (zxcvbn-ts's list).
 */
const COMMON = new Set<string>((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

export function isCommonPassword(password: string): boolean {
  return COMMON.has(password.toLowerCase());
}

/** A new password (creation, reset, change). Length is checked before anything is hashed. */
export const newPasswordInput = z
  .string()
  .min(PASSWORD_MIN, `must be at least ${PASSWORD_MIN} characters`)
  .max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`)
  .refine((p) => !isCommonPassword(p), 'is one of the most commonly used passwords; choose one that is harder to guess');

/** A password being checked (sign-in, current password): no policy, but nothing longer than any valid one. */
export const presentedPasswordInput = z.string().min(1, 'is required').max(PASSWORD_MAX, `must be at most ${PASSWORD_MAX} characters`);

export const COMMON_PASSWORD_COUNT = COMMON.size;
