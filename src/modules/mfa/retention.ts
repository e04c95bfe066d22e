import { DAY_MS, sweepOf } from '../../core/sweeper.ts';

/** Sign-in challenges a day after they expired (used or not); their token then reads as unknown. */
export const challengeSweep = sweepOf('mfa_challenges', 'expires_at < $1', DAY_MS);
