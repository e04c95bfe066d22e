import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';

/**
 * Sent and given-up mail a week after it was queued (bodies are already emptied once sent), through
 * email_outbox_done_index.
 */
export const outboxSweep = sweepOf('email_outbox', `status <> 'pending' and created_at < $1`, 7 * DAY, { doneAt: 'created_at' });
