import type { SignInOrigin } from './sign-in-binding.ts';

/**
 * A social or SSO sign-in this tab started that came back refused (a start that failed, the provider's
 * no): /login/callback hands it to /login, which shows the message beside the form it came from, filled
 * in as the person left it. The message travels in the history entry's state, never in the address.
 */
export interface ReturnedRefusal extends SignInOrigin {
  message: string;
}

interface RefusalState {
  refusal: ReturnedRefusal;
}

/** Where /login/callback sends a refusal of this tab's sign-in: the sign-in page of its workspace. */
export function backToSignIn(origin: SignInOrigin, message: string): { to: string; state: RefusalState } {
  const to = origin.workspaceId ? `/login?${new URLSearchParams({ workspace: origin.workspaceId }).toString()}` : '/login';
  return { to, state: { refusal: { ...origin, message } } };
}

/** The refusal handed to /login, if its history entry carries one. */
export function refusalOf(state: unknown): ReturnedRefusal | null {
  if (typeof state !== 'object' || state === null) return null;
  const refusal = (state as Partial<RefusalState>).refusal as Record<string, unknown> | undefined;
  if (typeof refusal !== 'object' || refusal === null) return null;
  const { workspaceId, via, email, message } = refusal;
  if (typeof workspaceId !== 'string' || typeof email !== 'string' || typeof message !== 'string') return null;
  if (via !== 'sso' && via !== 'social') return null;
  return { workspaceId, via, email, message };
}
