import { DAY } from '../../core/clock.ts';
import { sweepOf } from '../../core/sweeper.ts';
import { RISK_HISTORY_DAYS } from './risk.ts';

/** Scored attempts once no signal looks back at them (the new-IP and new-user-agent signals read 90 days). */
export const riskScoreSweep = sweepOf('risk_scores', 'created_at < $1', RISK_HISTORY_DAYS * DAY, {
  byWorkspace: true,
  doneAt: 'created_at',
});
