import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/**
 * Sessions a week after they ended or expired, and with them (foreign-key cascade) every refresh
 * token they had. A live session keeps its used tokens: presenting one is how reuse is detected.
 * Small batches, since each session may take thousands of tokens with it.
 */
export const sessionSweep = sweepOf('sessions', 'least(ended_at, expires_at) < $1', 7 * DAY, {
  batch: 200,
  // sessions_done_at_index: a refresh writes no column of it, so it stays a HOT update.
  doneAt: 'least(ended_at, expires_at)',
});

/**
 * Reset links a day after they expired (the one-email-a-minute rule reads only the last minute),
 * through password_reset_tokens_expires_at_index.
 */
export const resetTokenSweep = sweepOf('password_reset_tokens', 'expires_at < $1', DAY, { doneAt: 'expires_at' });
