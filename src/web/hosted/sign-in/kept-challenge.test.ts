import { describe, expect, it } from 'vitest';
import type { Challenge } from '../../api/types.ts';
import { CHALLENGE_TTL_MS, forgetChallenge, keepChallenge, keptChallenge } from './kept-challenge.ts';
import { MemoryStorage } from './memory-storage.ts';

const CHALLENGE: Challenge = { mfa_required: true, mfa_token: 'mfa_token_1', available_factors: ['totp'], challenge_id: 'mfc_1' };
const ORIGIN = { workspaceId: 'wsp_1', via: 'social' as const, email: 'ada@acme.example' };

describe('the second step kept for its history entry', () => {
  it('is shown again in its own entry of its own page while the challenge lives, and over once it has not', () => {
    const storage = new MemoryStorage();
    keepChallenge({ page: 'callback', entry: 'k1', challenge: CHALLENGE, origin: ORIGIN, email: ORIGIN.email }, storage, 1_000);
    expect(keptChallenge('callback', 'k1', storage, 1_000 + CHALLENGE_TTL_MS - 1)).toEqual({
      challenge: CHALLENGE,
      origin: ORIGIN,
      email: ORIGIN.email,
      expired: false,
    });
    expect(keptChallenge('callback', 'k1', storage, 1_000 + CHALLENGE_TTL_MS)?.expired).toBe(true);
    expect(keptChallenge('callback', 'k2', storage, 1_000)).toBeNull();
    expect(keptChallenge('login', 'k1', storage, 1_000)).toBeNull();
    forgetChallenge(storage);
    expect(keptChallenge('callback', 'k1', storage, 1_000)).toBeNull();
  });

  it('keeps the time the challenge came when the page moves it to another entry, and restarts it for a new challenge', () => {
    const storage = new MemoryStorage();
    keepChallenge({ page: 'login', entry: 'a', challenge: CHALLENGE, origin: null, email: 'x@acme.example' }, storage, 0);
    keepChallenge({ page: 'login', entry: 'b', challenge: CHALLENGE, origin: null, email: 'x@acme.example' }, storage, 60_000);
    expect(keptChallenge('login', 'b', storage, CHALLENGE_TTL_MS)?.expired).toBe(true);
    const next = { ...CHALLENGE, mfa_token: 'mfa_token_2' };
    keepChallenge({ page: 'login', entry: 'b', challenge: next, origin: null, email: 'x@acme.example' }, storage, CHALLENGE_TTL_MS);
    expect(keptChallenge('login', 'b', storage, CHALLENGE_TTL_MS + 1)).toMatchObject({ challenge: next, expired: false });
  });

  it('reads nothing from an entry it cannot read', () => {
    const storage = new MemoryStorage();
    storage.setItem('identity.sign_in_challenge', '{not json');
    expect(keptChallenge('login', 'a', storage, 0)).toBeNull();
    storage.setItem('identity.sign_in_challenge', JSON.stringify({ page: 'login', entry: 'a' }));
    expect(keptChallenge('login', 'a', storage, 0)).toBeNull();
  });
});
