import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { endedChallenge } from './ended-challenge.ts';

const apiError = (appCode: string, httpStatus: number, message: string) =>
  new TRPCClientError(message, { result: { error: { code: -32600, message, data: { appCode, httpStatus } } } });

describe('the second step of a sign-in, ended or not by a refused code', () => {
  it('ends when the challenge can no longer be answered, saying why', () => {
    expect(endedChallenge(apiError('INVALID_TOKEN', 401, 'The sign-in challenge is invalid, expired or already used'))).toBe(
      'Your sign-in expired before the code was entered. Sign in again.',
    );
    expect(endedChallenge(apiError('RATE_LIMITED', 429, 'Too many requests; try again later'))).toBe(
      'Too many codes were tried for this account. Wait a few minutes, then sign in again.',
    );
    expect(endedChallenge(apiError('ACCOUNT_LOCKED', 403, 'This account is locked; ask an admin to unlock it'))).toBe(
      'This account is locked; ask an admin to unlock it',
    );
    expect(endedChallenge(apiError('ACCOUNT_DEACTIVATED', 403, 'This account has been deactivated'))).toBe(
      'This account has been deactivated',
    );
  });

  it('stays for a code that can be tried again: wrong, malformed, or lost on the way', () => {
    expect(endedChallenge(apiError('INVALID_CODE', 401, 'The code is not correct, or was already used'))).toBeNull();
    expect(endedChallenge(apiError('BAD_REQUEST', 400, 'The request is invalid'))).toBeNull();
    expect(endedChallenge(apiError('INTERNAL', 500, 'boom'))).toBeNull();
    expect(endedChallenge(TRPCClientError.from(new TypeError('fetch failed')))).toBeNull();
  });
});
