import { problemOf } from '../../api/errors.ts';
import type { SignInOrigin } from './sign-in-binding.ts';

/**
 * A social or SSO sign-in this tab started that came back refused (a start that failed, the provider's
 * no), whose code could not be exchanged, or whose second step's challenge could no longer be answered
 * (ended-challenge.ts): /login/callback hands it to /login, which shows the message
 * beside the form it came from, filled in as the person left it. The message travels in the history
 * entry's state, never in the address, and is shown once: /login then takes it out of the entry
 * (`shownOnce`), so a reload or a Back to the entry shows the form, filled in, without it.
 */
export interface ReturnedRefusal extends SignInOrigin {
  /** Null once shown (or when there was nothing to say: another account chosen at the second step). */
  message: string | null;
}

interface RefusalState {
  refusal: ReturnedRefusal;
}

/**
 * Where /login/callback sends a refusal of this tab's sign-in: the sign-in page of its workspace (with
 * no message, the form as it was left: the person chose another account at the second step).
 */
export function backToSignIn(origin: SignInOrigin, message: string | null): { to: string; state: RefusalState } {
  const to = origin.workspaceId ? `/login?${new URLSearchParams({ workspace: origin.workspaceId }).toString()}` : '/login';
  return { to, state: { refusal: { ...origin, message } } };
}

/** The history state of /login once the refusal's message is shown: the form as it was left, no message. */
export function shownOnce(refusal: ReturnedRefusal): RefusalState {
  return { refusal: { ...refusal, message: null } };
}

/** The refusal handed to /login, if its history entry carries one. */
export function refusalOf(state: unknown): ReturnedRefusal | null {
  if (typeof state !== 'object' || state === null) return null;
  const refusal = (state as Partial<RefusalState>).refusal as Record<string, unknown> | undefined;
  if (typeof refusal !== 'object' || refusal === null) return null;
  const { workspaceId, via, email, message } = refusal;
  if (typeof workspaceId !== 'string' || typeof email !== 'string') return null;
  if (typeof message !== 'string' && message !== null) return null;
  if (via !== 'sso' && via !== 'social') return null;
  return { workspaceId, via, email, message };
}

/**
 * What the person is told when the provider let them in but this tab's exchange of the code failed.
 * A failure to reach the service, or one of the service's own (500, 503), may pass: try again. A code
 * refused as unknown, expired or used (or its verifier as not matching) cannot be tried again: the
 * sign-in starts over. Anything else (an account locked or deactivated since, the rate limit) is the
 * API's own message, written for people.
 */
export function exchangeFailure(error: unknown): string {
  const problem = problemOf(error);
  switch (problem.code) {
    case 'NETWORK':
      return 'The sign-in could not be finished: the service could not be reached. Check your connection and try again.';
    case 'INTERNAL':
    case 'UNAVAILABLE':
      return 'The sign-in could not be finished because of a problem on our side. Try again in a moment.';
    case 'INVALID_TOKEN':
      return 'This sign-in had expired or was already used, so it was not completed. Start it again.';
    default:
      return problem.message;
  }
}
