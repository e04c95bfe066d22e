import type { Challenge } from '../../api/types.ts';
import type { SignInOrigin } from './sign-in-binding.ts';

/**
 * The second step of a sign-in kept for the history entry that shows it, so a reload of that entry, or
 * Back/Forward to it, shows the same code step again while its challenge can still be answered. Kept
 * in this tab's sessionStorage only: never localStorage (other tabs, and after the browser closes) and
 * never the address (history, logs, Referer). One step per tab; the step forgets it when it ends or
 * succeeds (CodeStep).
 */

const KEY = 'identity.sign_in_challenge';
/** The service's challenge lives 5 minutes from the password or the provider's answer (mfa.service.ts CHALLENGE_TTL_MS). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** The page whose code step it is: the password form's (/login) or a social or SSO sign-in's (/login/callback). */
export type ChallengePage = 'login' | 'callback';

interface StoredChallenge {
  page: ChallengePage;
  /** The history entry showing the step (React Router's location key, which a reload and Back/Forward keep). */
  entry: string;
  mfaToken: string;
  challengeId: string;
  receivedAt: number;
  /** Where a social or SSO sign-in started (the callback's way back); null for the password form. */
  origin: SignInOrigin | null;
  /** The address the password form held, filled in again if the step ends. */
  email: string;
}

export interface KeptChallenge {
  challenge: Challenge;
  origin: SignInOrigin | null;
  email: string;
  /** Past the challenge's life: the step is over, the person signs in again. */
  expired: boolean;
}

function isStored(value: unknown): value is StoredChallenge {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    (v.page === 'login' || v.page === 'callback') &&
    typeof v.entry === 'string' &&
    typeof v.mfaToken === 'string' &&
    typeof v.challengeId === 'string' &&
    typeof v.receivedAt === 'number' &&
    typeof v.email === 'string' &&
    (v.origin === null || typeof v.origin === 'object')
  );
}

function read(storage: Storage): StoredChallenge | null {
  const stored = storage.getItem(KEY);
  if (stored === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch (error) {
    console.warn('sign-in: the kept second step could not be read', error);
    return null;
  }
  return isStored(value) ? value : null;
}

/**
 * Keeps the step shown in `entry` (again under a new entry when the page replaced its own: the time it
 * was received stays that of the challenge).
 */
export function keepChallenge(
  step: { page: ChallengePage; entry: string; challenge: Challenge; origin: SignInOrigin | null; email: string },
  storage: Storage = window.sessionStorage,
  now: number = Date.now(),
): void {
  const previous = read(storage);
  const receivedAt = previous?.mfaToken === step.challenge.mfa_token ? previous.receivedAt : now;
  const stored: StoredChallenge = {
    page: step.page,
    entry: step.entry,
    mfaToken: step.challenge.mfa_token,
    challengeId: step.challenge.challenge_id,
    receivedAt,
    origin: step.origin,
    email: step.email,
  };
  storage.setItem(KEY, JSON.stringify(stored));
}

/** The step this entry of `page` showed, if this tab kept one for it. */
export function keptChallenge(
  page: ChallengePage,
  entry: string,
  storage: Storage = window.sessionStorage,
  now: number = Date.now(),
): KeptChallenge | null {
  const stored = read(storage);
  if (stored === null || stored.page !== page || stored.entry !== entry) return null;
  return {
    challenge: { mfa_required: true, mfa_token: stored.mfaToken, available_factors: ['totp'], challenge_id: stored.challengeId },
    origin: stored.origin,
    email: stored.email,
    expired: now - stored.receivedAt >= CHALLENGE_TTL_MS,
  };
}

/** The step ended (signed in, ended by the service, or another account chosen): nothing to show again. */
export function forgetChallenge(storage: Storage = window.sessionStorage): void {
  storage.removeItem(KEY);
}
