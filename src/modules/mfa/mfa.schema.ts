import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { FACTOR_STATUSES } from './mfa.entity.ts';
import { labelInput } from '../../core/labels.ts';

export const factorOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: z.literal('totp'),
    status: z.enum(FACTOR_STATUSES),
    created_at: z.string(),
    verified_at: z.string().nullable(),
  })
  .meta({ id: 'Factor' });
export type FactorView = z.infer<typeof factorOutput>;
export const factorPage = pageOf(factorOutput);
export const listFactorsInput = z.strictObject({ ...pageParams }).prefault({});

/** The label the user chooses; an app with no name given is called "Authenticator app". */
export const enrollInput = z.strictObject({ name: labelInput(100).default('Authenticator app') }).prefault({});
export const enrollmentOutput = z
  .object({ factor: factorOutput, secret: z.string(), otpauth_uri: z.string(), qr_code_data_uri: z.string() })
  .meta({ id: 'TotpEnrollment' });

/** A code as people type it: exactly six digits. Anything else is BAD_REQUEST. */
export const totpCode = z.string().regex(/^\d{6}$/, 'must be six digits');

export const verifyFactorInput = z.strictObject({ id: z.string().max(100), code: totpCode });
export const factorIdInput = z.object({ id: z.string().max(100) });

/** The sign-in challenge of the spec (instead of tokens). */
export const challengeOutput = z
  .object({
    mfa_required: z.literal(true),
    mfa_token: z.string(),
    available_factors: z.array(z.literal('totp')),
    challenge_id: z.string(),
  })
  .meta({ id: 'SignInChallenge' });
export type ChallengeView = z.infer<typeof challengeOutput>;

/**
 * The code is checked in the handler, after the attempt is counted: a malformed one counts too.
 * `challenge_id`, from the same challenge as the token, may be sent back with it; it must then match.
 */
export const mfaVerifyInput = z.strictObject({
  mfa_token: z.string().min(1).max(512),
  code: z.unknown(),
  challenge_id: z.string().max(100).optional(),
});
