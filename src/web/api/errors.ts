import { TRPCClientError } from '@trpc/client';
import type { AppErrorCode, FieldProblem } from '../../core/errors.ts';

/**
 * What the person is shown when a call fails: the API's code, its message (written for people) and field
 * problems. `UNAVAILABLE` is a 503: a feature this server cannot offer (actions without isolated-vm).
 */
export interface Problem {
  code: AppErrorCode | 'NETWORK' | 'UNAVAILABLE';
  message: string;
  details: FieldProblem[];
}

const NETWORK: Problem = {
  code: 'NETWORK',
  message: 'The service could not be reached. Check your connection and try again.',
  details: [],
};

interface ErrorData {
  appCode?: AppErrorCode;
  httpStatus?: number;
  details?: FieldProblem[];
}

/** A problem found before calling the API (two passwords that differ), shown like the API's own. */
export class FormProblem extends Error {}

export function problemOf(error: unknown): Problem {
  if (error instanceof FormProblem) return { code: 'BAD_REQUEST', message: error.message, details: [] };
  if (error instanceof TRPCClientError) {
    const data = error.data as ErrorData | undefined;
    if (!data?.appCode) return NETWORK;
    if (data.httpStatus === 503) return { code: 'UNAVAILABLE', message: error.message, details: [] };
    if (data.appCode === 'INTERNAL')
      return { code: 'INTERNAL', message: 'Something went wrong on our side. Try again in a moment.', details: [] };
    return { code: data.appCode, message: error.message, details: data.details ?? [] };
  }
  return NETWORK;
}

/**
 * A public call (sign-in, a reset link) answers NOT_FOUND when its workspace id names no workspace.
 * The API's message names the X-Tenant-ID header, which the person never saw; say it in the form's words.
 */
export async function inNamedWorkspace<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (codeOf(error) === 'NOT_FOUND') throw new FormProblem('No workspace has this Workspace ID. Check it and try again.');
    throw error;
  }
}

export function codeOf(error: unknown): Problem['code'] | undefined {
  return error ? problemOf(error).code : undefined;
}
