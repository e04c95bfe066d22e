import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { FormProblem } from '../../api/errors.ts';
import { backToSignIn, exchangeFailure, refusalOf, shownOnce } from './returned-refusal.ts';

const origin = { workspaceId: 'wsp_01abcdefghjkmnpqrstvwxyz0', via: 'sso' as const, email: 'ada@acme.example' };

const apiError = (appCode: string, httpStatus: number, message: string) =>
  new TRPCClientError(message, { result: { error: { code: -32600, message, data: { appCode, httpStatus } } } });

describe('a refused sign-in handed back to /login', () => {
  it('carries the message once: the entry it leaves keeps the form as it was, without the message', () => {
    const back = backToSignIn(origin, 'No organization signs in with SSO for this email domain');
    expect(back.to).toBe(`/login?workspace=${origin.workspaceId}`);
    const shown = refusalOf(back.state);
    expect(shown).toEqual({ ...origin, message: 'No organization signs in with SSO for this email domain' });
    const after = refusalOf(shownOnce(shown as NonNullable<typeof shown>));
    expect(after).toEqual({ ...origin, message: null });
  });

  it('reads nothing from a history state it did not write', () => {
    for (const state of [
      null,
      'x',
      {},
      { refusal: null },
      { refusal: { ...origin, message: 3 } },
      { refusal: { ...origin, via: 'saml', message: 'm' } },
    ])
      expect(refusalOf(state)).toBeNull();
  });

  it('says to try again when the exchange could not reach the service or the service failed, to start again when the code is spent', () => {
    expect(exchangeFailure(TRPCClientError.from(new TypeError('fetch failed')))).toMatch(
      /could not be reached\. Check your connection and try again\.$/,
    );
    expect(exchangeFailure(apiError('INTERNAL', 500, 'stack trace here'))).toBe(
      'The sign-in could not be finished because of a problem on our side. Try again in a moment.',
    );
    expect(exchangeFailure(apiError('UNAVAILABLE', 503, 'The database cannot be reached'))).toMatch(/Try again in a moment\.$/);
    expect(exchangeFailure(apiError('INVALID_TOKEN', 401, 'This sign-in code is unknown, expired or already used'))).toBe(
      'This sign-in had expired or was already used, so it was not completed. Start it again.',
    );
    // An account refused at the last moment says why, in the API's words.
    expect(exchangeFailure(apiError('ACCOUNT_DEACTIVATED', 403, 'This account is deactivated'))).toBe('This account is deactivated');
    expect(exchangeFailure(new FormProblem('not this tab'))).toBe('not this tab');
  });
});
