/**
 * Binds a social or SSO sign-in to the tab that started it (docs/decisions.md, "The dashboard binds its
 * social and SSO sign-ins to the tab that started them"). The start sends a PKCE `code_challenge`
 * (RFC 7636, S256) and a random `state`; the tab keeps the verifier and the state in sessionStorage, and
 * /login/callback exchanges a code only with the verifier of the sign-in whose state came back with it.
 * A code this tab did not ask for (an attacker's own, sent as a link: login CSRF) finds no verifier and
 * is never exchanged.
 */

import { sha256 } from '@noble/hashes/sha2.js';

/** One sign-in in flight per tab: a new start replaces the previous one. */
const PENDING_KEY = 'identity.external_sign_in';
/** The server forgets a sign-in 10 minutes after its start (FLOW_TTL_MS); an older verifier is stale. */
const PENDING_TTL_MS = 10 * 60 * 1000;

/**
 * Where the sign-in page was when the sign-in started (never the password): a refusal that comes back
 * to this tab returns the person to the form as they left it.
 */
export interface SignInOrigin {
  workspaceId: string;
  /** `sso`: the company SSO form; `social`: a provider's button. */
  via: 'sso' | 'social';
  /** For SSO the address that chose the connection; for a provider, what the email field held (maybe nothing). */
  email: string;
}

interface PendingSignIn {
  state: string;
  verifier: string;
  startedAt: number;
  origin?: SignInOrigin;
}

/** The sign-in this tab started, as the callback finds it. */
export interface StartedSignIn {
  verifier: string;
  /** Null for an entry written before the page kept it. */
  origin: SignInOrigin | null;
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomToken(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * RFC 7636 §4.2: BASE64URL(SHA-256(verifier)). Not WebCrypto's digest: `crypto.subtle` exists in
 * secure contexts only (https, localhost), and a self-hosted service is often opened over plain http
 * at a LAN address (`crypto.getRandomValues`, used for the verifier and the state, exists everywhere).
 */
export function s256Challenge(verifier: string): string {
  return base64url(sha256(new TextEncoder().encode(verifier)));
}

/**
 * The provider's start URL (it may already carry `workspace_id`, `redirect_uri`…) with this tab's
 * binding added, after remembering the verifier (and where the page was) for the callback.
 */
export function boundStartUrl(
  startUrl: string,
  origin: SignInOrigin,
  storage: Storage = window.sessionStorage,
  now: number = Date.now(),
  base: string = window.location.origin,
): string {
  const pending: PendingSignIn = { state: randomToken(), verifier: randomToken(), startedAt: now, origin };
  const url = new URL(startUrl, base);
  url.searchParams.set('code_challenge', s256Challenge(pending.verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  url.searchParams.set('state', pending.state);
  storage.setItem(PENDING_KEY, JSON.stringify(pending));
  return url.href;
}

function isOrigin(value: unknown): value is SignInOrigin {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.workspaceId === 'string' && (v.via === 'sso' || v.via === 'social') && typeof v.email === 'string';
}

function isPending(value: unknown): value is PendingSignIn {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.state === 'string' && typeof v.verifier === 'string' && typeof v.startedAt === 'number';
}

/**
 * The sign-in this tab started, when `state` is the one it came back with and it is recent; null
 * otherwise. Only reads: `forgetSignIn` ends it (the callback does, whatever came back).
 */
export function readSignIn(state: string | null, storage: Storage = window.sessionStorage, now: number = Date.now()): StartedSignIn | null {
  const stored = storage.getItem(PENDING_KEY);
  if (stored === null || state === null) return null;
  let pending: unknown;
  try {
    pending = JSON.parse(stored);
  } catch (error) {
    console.warn('sign-in: the stored sign-in could not be read', error);
    return null;
  }
  if (!isPending(pending) || pending.state !== state) return null;
  if (now - pending.startedAt > PENDING_TTL_MS) return null;
  return { verifier: pending.verifier, origin: isOrigin(pending.origin) ? pending.origin : null };
}

/** Ends the sign-in this tab started: it is used once. */
export function forgetSignIn(storage: Storage = window.sessionStorage): void {
  storage.removeItem(PENDING_KEY);
}
