import { z } from 'zod';
import { canonicalEmail, EMAIL_PATTERN } from '../../core/addresses.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { METADATA_MAX_JSON } from '../../core/patch.ts';
import { newPasswordInput } from '../auth/password-policy.ts';
import { USER_STATUSES } from './user.entity.ts';
import { nameInput } from './names.ts';
import { absentIfNull } from '../../core/absent-if-null.ts';
import { searchInput } from '../../core/labels.ts';

/** An email address, taken in its stored form (core/addresses.ts: trimmed, lower case, an IDN domain in punycode). */
export const emailInput = z
  .string()
  .overwrite(canonicalEmail)
  .email({ pattern: EMAIL_PATTERN, message: 'must be an email address' })
  .max(254);
export const passwordInput = newPasswordInput;

export const userOutput = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    status: z.enum(USER_STATUSES),
    created_at: z.string(),
    updated_at: z.string(),
    last_sign_in_at: z.string().nullable(),
    email_verified: z.boolean(),
    mfa_enabled: z.boolean(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'User' });
export type UserView = z.infer<typeof userOutput>;

/** Free JSON about a user, at most 16 KiB once serialised. */
export const metadataInput = z
  .record(z.string().max(100), z.unknown())
  .refine((m) => JSON.stringify(m).length <= METADATA_MAX_JSON, 'must be at most 16 KiB of JSON');

/** A change to a user's metadata, merged into it as Auth0 merges `user_metadata` (core/patch.ts). */
export const metadataPatchInput = metadataInput.describe(
  'Merged into the stored metadata key by key, as Auth0 merges user_metadata: a key sent replaces the stored one ' +
    '(a nested object whole, not merged), a key sent as null is removed, keys not sent are kept; the result is at most 16 KiB of JSON',
);

export const createUserInput = z.strictObject({
  email: emailInput,
  password: passwordInput,
  name: absentIfNull(nameInput),
  email_verified: z.boolean().optional(),
  metadata: metadataInput.optional(),
});
export type CreateUserInput = z.infer<typeof createUserInput>;

export const listUsersInput = z
  .object({
    q: searchInput.optional(),
    status: z.enum(USER_STATUSES).optional(),
    ...pageParams,
  })
  .prefault({});
export type ListUsersInput = z.infer<typeof listUsersInput>;

export const userIdInput = z.object({ id: z.string().max(100) });

export const userPage = pageOf(userOutput);

/**
 * What an admin may change here; `status: active` also lifts a lockout, `deactivated` ends every
 * session, `locked` ends every session and refuses sign-in (ACCOUNT_LOCKED) until an admin sets
 * `active` again. A new
 * `email` is unverified unless `email_verified` says otherwise.
 */
export const updateUserInput = z.strictObject({
  id: z.string().max(100),
  email: emailInput.optional(),
  name: nameInput.nullable().optional(),
  status: z
    .enum(USER_STATUSES)
    .optional()
    .describe(
      '`active` reactivates or unlocks; `deactivated` ends every session; `locked` ends every session and refuses sign-in until set `active`',
    ),
  email_verified: z.boolean().optional(),
  metadata: metadataPatchInput.optional(),
});
export type UpdateUserInput = z.infer<typeof updateUserInput>;
