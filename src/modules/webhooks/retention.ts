import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/**
 * Deliveries 30 days after their last attempt once they succeeded or failed for good, with their
 * attempts (cascade). Pending ones stay, however old: a disabled endpoint's wait until it is enabled.
 * Through webhook_deliveries_done_index.
 */
export const deliverySweep = sweepOf('webhook_deliveries', `status <> 'pending' and updated_at < $1`, 30 * DAY, {
  batch: 1000,
  doneAt: 'updated_at',
});
