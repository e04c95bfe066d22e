import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Ends a user's sign-ins still waiting for their code, where the user ends their sessions themselves
 * (a password reset or change, revoke-all): each challenge was opened by a password check made before,
 * so its `mfa_token` must not open a session afterwards. A lock or a deactivation leaves them: the
 * challenge is then refused with the account's state (ACCOUNT_LOCKED, ACCOUNT_DEACTIVATED).
 */
export async function retirePendingChallenges(em: EntityManager, userId: string, now: Date): Promise<void> {
  await em.execute('update mfa_challenges set used_at = ? where user_id = ? and used_at is null and expires_at > ?', [now, userId, now]);
}
