import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import { FormProblem, inNamedWorkspace, problemOf } from './errors.ts';

describe('what a failed call tells the person', () => {
  it('keeps the API code, its message and field problems', () => {
    const error = new TRPCClientError('email: must be an email address', {
      result: {
        error: {
          code: -32600,
          message: 'email: must be an email address',
          data: { appCode: 'BAD_REQUEST', httpStatus: 400, details: [{ path: 'email', message: 'must be an email address' }] },
        },
      },
    });
    expect(problemOf(error)).toEqual({
      code: 'BAD_REQUEST',
      message: 'email: must be an email address',
      details: [{ path: 'email', message: 'must be an email address' }],
    });
  });

  it('never shows internals of a 500, and says when the service could not be reached', () => {
    const internal = new TRPCClientError('stack trace here', {
      result: { error: { code: -32603, message: 'stack trace here', data: { appCode: 'INTERNAL', httpStatus: 500 } } },
    });
    expect(problemOf(internal).message).not.toContain('stack');
    expect(problemOf(TRPCClientError.from(new TypeError('fetch failed'))).code).toBe('NETWORK');
    const unavailable = new TRPCClientError('Actions are unavailable on this server: isolated-vm is not installed', {
      result: {
        error: { code: -32603, message: 'Actions are unavailable on this server', data: { appCode: 'UNAVAILABLE', httpStatus: 503 } },
      },
    });
    expect(problemOf(unavailable)).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('unavailable on this server') });
    expect(problemOf(new FormProblem('The two passwords are not the same.'))).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('says an unknown workspace in the words of the sign-in form, not of the X-Tenant-ID header', async () => {
    const unknown = new TRPCClientError('No workspace has the id given in X-Tenant-ID', {
      result: {
        error: { code: -32004, message: 'No workspace has the id given in X-Tenant-ID', data: { appCode: 'NOT_FOUND', httpStatus: 404 } },
      },
    });
    const shown = problemOf(await inNamedWorkspace(Promise.reject(unknown)).catch((error: unknown) => error));
    expect(shown.message).toBe('No workspace has this Workspace ID. Check it and try again.');
    expect(shown.message).not.toContain('X-Tenant-ID');
    const wrong = new TRPCClientError('The provided credentials are incorrect', {
      result: {
        error: {
          code: -32001,
          message: 'The provided credentials are incorrect',
          data: { appCode: 'INVALID_CREDENTIALS', httpStatus: 401 },
        },
      },
    });
    expect(problemOf(await inNamedWorkspace(Promise.reject(wrong)).catch((error: unknown) => error)).code).toBe('INVALID_CREDENTIALS');
    await expect(inNamedWorkspace(Promise.resolve('signed in'))).resolves.toBe('signed in');
  });
});
