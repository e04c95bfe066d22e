import { TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * The closed set of error codes clients branch on: the spec's table plus CONTRACT.md's additions.
 * Each maps, here and nowhere else, to an HTTP status and the tRPC code that carries it.
 */
const TABLE = {
  BAD_REQUEST: { status: 400, trpc: 'BAD_REQUEST' },
  INVALID_CREDENTIALS: { status: 401, trpc: 'UNAUTHORIZED' },
  UNAUTHORIZED: { status: 401, trpc: 'UNAUTHORIZED' },
  INVALID_TOKEN: { status: 401, trpc: 'UNAUTHORIZED' },
  INVALID_CODE: { status: 401, trpc: 'UNAUTHORIZED' },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN' },
  ACCOUNT_LOCKED: { status: 403, trpc: 'FORBIDDEN' },
  ACCOUNT_DEACTIVATED: { status: 403, trpc: 'FORBIDDEN' },
  MFA_ENROLLMENT_REQUIRED: { status: 403, trpc: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND' },
  CONFLICT: { status: 409, trpc: 'CONFLICT' },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS' },
  INTERNAL: { status: 500, trpc: 'INTERNAL_SERVER_ERROR' },
  /** A store the request needs (PostgreSQL) cannot be reached right now; nothing was done, retry later. */
  UNAVAILABLE: { status: 503, trpc: 'SERVICE_UNAVAILABLE' },
} as const satisfies Record<string, { status: number; trpc: TRPC_ERROR_CODE_KEY }>;

export type AppErrorCode = keyof typeof TABLE;

export const APP_ERROR_CODES = Object.keys(TABLE) as AppErrorCode[];

export interface FieldProblem {
  path: string;
  message: string;
}

export interface AppErrorOptions {
  /** Field problems, shown to the client: on BAD_REQUEST, and on CONFLICT the field whose value is taken (core/conflicts.ts). */
  details?: FieldProblem[];
  /** Overrides the table's status: 413 for a body over 1 MiB (CONTRACT), 405 for a method a path lacks. */
  status?: number;
  /** Response headers that belong to this error (Retry-After on RATE_LIMITED). */
  headers?: Record<string, string>;
  /** Internal cause: logged, never shown. */
  cause?: unknown;
  /**
   * `bearer`: a 401 for the `Authorization: Bearer` credential itself (missing, malformed, or bad),
   * which the REST and tRPC doors answer with RFC 6750's `WWW-Authenticate` (envelope.ts). Not set for
   * a refresh token, reset link, code or password sent in a body: no challenge to meet there.
   */
  challenge?: 'bearer';
  /**
   * Commit what the request wrote before failing (a failed sign-in's audit row and lockout counter,
   * the session ended by refresh-token reuse). Without it a failed mutation writes nothing.
   */
  keepChanges?: boolean;
}

/**
 * The one error type handlers throw. It is a TRPCError, so tRPC keeps it as it is, and every door
 * (REST, tRPC, GraphQL) reads the same `appCode` from it.
 */
export class AppError extends TRPCError {
  readonly appCode: AppErrorCode;
  readonly status: number;
  readonly details: FieldProblem[] | undefined;
  readonly headers: Record<string, string>;
  readonly keepChanges: boolean;
  readonly challenge: 'bearer' | undefined;

  constructor(code: AppErrorCode, message: string, options: AppErrorOptions = {}) {
    super({ code: TABLE[code].trpc, message, cause: options.cause });
    this.name = 'AppError';
    this.appCode = code;
    this.status = options.status ?? TABLE[code].status;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.keepChanges = options.keepChanges ?? false;
    this.challenge = options.challenge;
  }
}

/**
 * The 405 of a known path asked with a method it does not take: code BAD_REQUEST in the envelope,
 * `Allow` listing the methods it does (RFC 9110 §15.5.6). The REST door and the browser sign-in
 * routes (modules/sso/sign-in.routes.ts) answer it alike.
 */
export function methodNotAllowed(method: string, path: string, allow: string): AppError {
  return new AppError('BAD_REQUEST', `${method} is not supported at ${path}; use ${allow}`, { status: 405, headers: { Allow: allow } });
}

export function statusOf(code: AppErrorCode): number {
  return TABLE[code].status;
}

export function isAppErrorCode(value: unknown): value is AppErrorCode {
  return typeof value === 'string' && Object.hasOwn(TABLE, value);
}
