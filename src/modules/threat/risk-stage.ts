import { recordAudit } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import type { SignInRun, SignInStage } from '../auth/sign-in.ts';
import { scoreAttempt } from './risk.ts';

/**
 * The risk stage, after account state and before the second factor: the attempt (its password
 * already right) is scored and stored in one statement; a score at or above the workspace's
 * threshold refuses it with FORBIDDEN, audited, and the refusal is kept (it feeds later scores).
 */
export const riskStage: SignInStage = async (run) => {
  const { attempt, user } = run;
  const scored = await scoreAttempt(
    run.em,
    {
      workspaceId: attempt.workspaceId,
      email: attempt.email,
      ip: attempt.origin.ip,
      userAgent: attempt.origin.userAgent,
      userId: user.id,
      now: run.now,
      lockedAccount: false,
    },
    { kind: 'decide' },
  );
  if (scored.outcome !== 'blocked') {
    run.riskScoreId = scored.id;
    return undefined;
  }
  recordAudit(
    { em: run.em, workspaceId: attempt.workspaceId, actor: { type: 'user', id: user.id }, ...attempt.origin },
    {
      eventType: 'auth.login',
      outcome: 'failure',
      target: { type: 'user', id: user.id },
      details: {
        reason: 'risk_blocked',
        email: attempt.email,
        risk_score: scored.score,
        threshold: scored.threshold,
        risk_reasons: scored.reasons.map((r) => r.code),
      },
    },
  );
  throw new AppError('FORBIDDEN', 'This sign-in was blocked as too risky; try again later or contact an administrator', {
    keepChanges: true,
  });
};

/**
 * An attempt the risk stage allowed and a later stage (an action) refused is stored as the failure it
 * became, with the refusal's reason: the threat statistics count it as a failure, and the new-address
 * signal does not learn the address from it.
 */
export async function recordLaterRefusal(run: SignInRun, reason: string): Promise<void> {
  if (!run.riskScoreId) return;
  await run.em.execute(`update risk_scores set outcome = 'failure', failure_reason = ? where id = ? and outcome = 'allowed'`, [
    reason,
    run.riskScoreId,
  ]);
}
