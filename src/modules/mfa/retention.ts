import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/**
 * Sign-in challenges a day after they expired (used or not); their token then reads as unknown.
 * Through mfa_challenges_expires_at_index.
 */
export const challengeSweep = sweepOf('mfa_challenges', 'expires_at < $1', DAY, { doneAt: 'expires_at' });
