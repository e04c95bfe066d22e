import { recordAudit } from '../../core/audit.ts';
import type { SignInStage } from '../auth/sign-in.ts';
import { issueChallenge } from './mfa.service.ts';

/**
 * The second-factor stage: a user with a verified factor gets a challenge instead of tokens. A factor
 * still `Pending verification` does not count. Custom claims from actions wait on the challenge.
 */
export const secondFactorStage: SignInStage = async (run) => {
  if (!run.user.hasVerifiedFactor) return undefined;
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
