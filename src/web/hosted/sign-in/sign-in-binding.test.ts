import { describe, expect, it } from 'vitest';
import { boundStartUrl, forgetSignIn, readSignIn, s256Challenge, type SignInOrigin } from './sign-in-binding.ts';
import { MemoryStorage } from './memory-storage.ts';

const ORIGIN: SignInOrigin = { workspaceId: 'wsp_1', via: 'sso', email: 'jane@acme.example' };

/** What the callback does: reads the sign-in of that state, then forgets the tab's sign-in whatever it found. */
function takeVerifier(state: string | null, storage: Storage, now?: number): string | null {
  const started = readSignIn(state, storage, now);
  forgetSignIn(storage);
  return started?.verifier ?? null;
}

const START =
  'https://id.example/api/v1/auth/oauth/google/start?workspace_id=wsp_1&redirect_uri=https%3A%2F%2Fid.example%2Flogin%2Fcallback';

describe('binding a social or SSO sign-in to the tab that starts it', () => {
  it('computes RFC 7636’s S256 challenge (appendix B)', () => {
    expect(s256Challenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('adds the challenge, S256 and a state to the start URL, keeping its own parameters, and remembers the verifier for that state', () => {
    const storage = new MemoryStorage();
    const url = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example'));
    expect(url.pathname).toBe('/api/v1/auth/oauth/google/start');
    expect(url.searchParams.get('workspace_id')).toBe('wsp_1');
    expect(url.searchParams.get('redirect_uri')).toBe('https://id.example/login/callback');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    const state = url.searchParams.get('state') as string;
    expect(state).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const verifier = takeVerifier(state, storage, 2_000) as string;
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('code_challenge')).toBe(s256Challenge(verifier));
    // Used once.
    expect(takeVerifier(state, storage, 2_000)).toBeNull();
  });

  it('keeps where the page was (workspace, the way chosen, the email; never a password) for a refusal coming back to the tab', () => {
    const storage = new MemoryStorage();
    const state = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example')).searchParams.get('state') as string;
    expect(Object.keys(JSON.parse(storage.getItem(storage.key(0) as string) as string)).sort()).toEqual([
      'origin',
      'startedAt',
      'state',
      'verifier',
    ]);
    expect(readSignIn('another-state', storage, 2_000)).toBeNull();
    // Reading leaves it in place; the callback forgets it.
    expect(readSignIn(state, storage, 2_000)?.origin).toEqual(ORIGIN);
    expect(readSignIn(state, storage, 2_000)?.origin).toEqual(ORIGIN);
    forgetSignIn(storage);
    expect(readSignIn(state, storage, 2_000)).toBeNull();
  });

  it('still reads a sign-in kept without its origin (started by the page before it kept one)', () => {
    const storage = new MemoryStorage();
    const state = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example')).searchParams.get('state') as string;
    const key = storage.key(0) as string;
    const older = JSON.parse(storage.getItem(key) as string);
    delete older.origin;
    storage.setItem(key, JSON.stringify(older));
    expect(readSignIn(state, storage, 2_000)).toEqual({ verifier: older.verifier, origin: null });
  });

  it('answers no verifier for another state, no state, or a sign-in started too long ago, and forgets it anyway', () => {
    const storage = new MemoryStorage();
    for (const [state, now] of [
      ['someone-elses-state', 2_000],
      [null, 2_000],
      ['own', 1_000 + 10 * 60 * 1000 + 1],
    ] as const) {
      const own = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example')).searchParams.get('state') as string;
      expect(takeVerifier(state === 'own' ? own : state, storage, now)).toBeNull();
      expect(storage.length).toBe(0);
    }
    expect(takeVerifier('anything', storage)).toBeNull();
  });

  it('keeps one sign-in per tab: a new start replaces the one before', () => {
    const storage = new MemoryStorage();
    const first = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example')).searchParams.get('state');
    const second = new URL(boundStartUrl(START, ORIGIN, storage, 1_000, 'https://id.example')).searchParams.get('state');
    expect(takeVerifier(first, storage, 1_000)).toBeNull();
    expect(takeVerifier(second, storage, 1_000)).toBeNull();
  });
});
