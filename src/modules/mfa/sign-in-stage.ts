import { recordAudit } from '../../core/audit.ts';
import type { SignInStage } from '../auth/sign-in.ts';
import { issueChallenge } from './mfa.service.ts';

/**
 * The second-factor stage: a user with a verified factor gets a challenge instead of tokens. A factor
 * still `Pending verification` does not count. Custom claims from actions wait on the challenge. The
 * right password ends a run of wrong ones here too (a sign-in without a factor does it as its session
 * starts): the lock counts consecutive failures.
 */
export const secondFactorStage: SignInStage = async (run) => {
  if (!run.user.hasVerifiedFactor) return undefined;
  await run.em.execute('update users set failed_login_count = 0 where id = ? and failed_login_count > 0', [run.user.id]);
  const challenge = issueChallenge(run.em, run.attempt.workspaceId, run.user.id, run.now, run.claims ?? null);
  recordAudit(
    { em: run.em, workspaceId: run.attempt.workspaceId, actor: { type: 'user', id: run.user.id }, ...run.attempt.origin },
    {
      eventType: 'auth.login',
      target: { type: 'user', id: run.user.id },
      details: { method: 'password', email: run.attempt.email, mfa_required: true, challenge_id: challenge.challenge_id },
    },
  );
  return { kind: 'challenge', challenge };
};
