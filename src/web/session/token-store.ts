import type { Tokens } from '../api/types.ts';

/**
 * Where the dashboard keeps its credentials (docs/decisions.md, "The dashboard keeps the access token
 * in memory and the refresh token in sessionStorage"): the access token only in this module's memory,
 * the refresh token in the tab's sessionStorage so a reload does not sign the person out, and nothing
 * in localStorage or cookies.
 */

const REFRESH_KEY = 'identity.refresh_token';
/** Refresh a little before the access token expires rather than have a request bounce off it. */
const EARLY_MS = 30_000;

let access: { token: string; expiresAt: number } | null = null;
/** The last session of this document was ended by the service (revoked elsewhere, expired), not by the person. */
let endedByService = false;
const listeners = new Set<() => void>();

function notify(): void {
  for (const listener of listeners) listener();
}

function forget(byService: boolean): void {
  const wasSignedIn = tokenStore.hasSession();
  access = null;
  window.sessionStorage.removeItem(REFRESH_KEY);
  if (wasSignedIn) {
    endedByService = byService;
    notify();
  }
}

export const tokenStore = {
  /** The access token while it has more than a few seconds to live, else null. */
  accessToken(): string | null {
    return access && access.expiresAt - EARLY_MS > Date.now() ? access.token : null;
  },

  refreshToken(): string | null {
    return window.sessionStorage.getItem(REFRESH_KEY);
  },

  hasSession(): boolean {
    return access !== null || this.refreshToken() !== null;
  },

  save(tokens: Pick<Tokens, 'access_token' | 'refresh_token' | 'expires_in'>): void {
    const wasSignedIn = this.hasSession();
    access = { token: tokens.access_token, expiresAt: Date.now() + tokens.expires_in * 1000 };
    window.sessionStorage.setItem(REFRESH_KEY, tokens.refresh_token);
    endedByService = false;
    if (!wasSignedIn) notify();
  },

  /** Forget the access token (the server refused it); the refresh token may still get a new one. */
  dropAccessToken(): void {
    access = null;
  },

  /** Forget the session: the person signed out. */
  clear(): void {
    forget(false);
  },

  /** Forget the session the service refused the tokens of (revoked elsewhere, expired): /login says so. */
  refused(): void {
    forget(true);
  },

  /** Whether the session this tab had was ended by the service rather than signed out here (what /login says). */
  endedByService(): boolean {
    return endedByService;
  },

  /** Called when the tab goes from signed in to signed out or back. */
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
