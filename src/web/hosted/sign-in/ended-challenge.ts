import { problemOf } from '../../api/errors.ts';

/** Said beside the form when the challenge expired before a code was accepted (sent, or the step reloaded too late). */
export const EXPIRED_CHALLENGE = 'Your sign-in expired before the code was entered. Sign in again.';

/**
 * Whether a refused code ended the sign-in's second step, and what the person is told beside the form
 * the sign-in started from: a challenge that can no longer be answered (expired or used, out of
 * attempts, the account locked or deactivated since the sign-in started) sends them back there; a wrong
 * or malformed code, or a call that failed on the way (the network, a 500), leaves the step to try again
 * (null).
 */
export function endedChallenge(error: unknown): string | null {
  const problem = problemOf(error);
  switch (problem.code) {
    case 'INVALID_TOKEN':
      return EXPIRED_CHALLENGE;
    // Five codes in five minutes per account, the window opened by the first: it ends no sooner than a
    // challenge answered in it expires, unless codes sent to an earlier challenge opened it.
    case 'RATE_LIMITED':
      return 'Too many codes were tried for this account. Wait a few minutes, then sign in again.';
    // The API's own words (written for people): locked after failed sign-ins, by an admin, deactivated.
    case 'ACCOUNT_LOCKED':
    case 'ACCOUNT_DEACTIVATED':
      return problem.message;
    default:
      return null;
  }
}
