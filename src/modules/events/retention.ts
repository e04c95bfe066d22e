import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/** Outbox events a week after they were fanned out into deliveries (which carry their own copy of the payload). */
export const eventSweep = sweepOf('events', 'created_at < $1 and fanned_out_at is not null', 7 * DAY, {
  byWorkspace: true,
  doneAt: 'created_at',
});
