import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { Response } from 'express';
import type { Context } from './context.ts';
import type { AppError, FieldProblem } from './errors.ts';
import { toAppError } from './error-normalize.ts';
import { rateLimitHeaders } from './rate-limit.ts';
import { getRequestInfo } from './request-info.ts';
import type { ErrorData } from './trpc.ts';

/** The spec's error envelope. */
export interface ErrorEnvelope {
  error: { code: string; message: string; details?: FieldProblem[] };
  meta: { request_id: string };
}

export function errorEnvelope(requestId: string, error: AppError): ErrorEnvelope {
  return {
    error: { code: error.appCode, message: error.message, ...(error.details ? { details: error.details } : {}) },
    meta: { request_id: requestId },
  };
}

/**
 * RFC 6750 §3's challenge, for a 401 about the bearer credential itself (`challenge: 'bearer'`): no
 * credential (or not a Bearer one) is `Bearer realm="…"` alone, a bad, expired or revoked one adds
 * `error="invalid_token"`. The realm is BASE_URL, the issuer, as the token endpoint's `Basic` one is.
 * Other 401s (a wrong password or code, a refresh token, reset link or mfa_token in a body) carry none:
 * the Authorization header is not what failed, and a client that meets `invalid_token` refreshes.
 */
export function challengeHeaders(error: AppError, realm: string): Record<string, string> {
  if (error.challenge !== 'bearer' || error.status !== 401) return {};
  const code = error.appCode === 'INVALID_TOKEN' ? ', error="invalid_token"' : '';
  return { 'WWW-Authenticate': `Bearer realm="${realm}"${code}` };
}

/** Any error, in the envelope, with its status and headers (Retry-After …), and `extra` ones. */
export function sendError(res: Response, error: AppError, extra: Record<string, string> = {}): void {
  const { requestId } = getRequestInfo(res.req);
  res
    .status(error.status)
    .set({ ...error.headers, ...extra })
    .json(errorEnvelope(requestId, error));
}

/** An error on /graphql answered before Yoga runs, in GraphQL's shape with the code every door uses. */
export function sendGraphQLError(res: Response, error: AppError): void {
  res
    .status(error.status)
    .set(error.headers)
    .json({ errors: [{ message: error.message, extensions: { code: error.appCode } }] });
}

/** An error on /trpc answered before tRPC runs, in the shape tRPC's error formatter gives (core/trpc.ts). */
export function sendTRPCError(res: Response, error: AppError): void {
  const data: ErrorData = { appCode: error.appCode, httpStatus: error.status };
  res
    .status(error.status)
    .set(error.headers)
    .json({ error: { message: error.message, code: TRPC_ERROR_CODES_BY_KEY[error.code], data } });
}

const GRAPHQL_PATH = /^\/graphql(\/|$)/i;
const TRPC_PATH = /^\/trpc(\/|$)/i;

/**
 * An error answered before a door's own handler runs (the per-IP limit, a body too large or not JSON),
 * in that door's shape: GraphQL's `errors[].extensions.code`, tRPC's `error.data.appCode`, else the
 * envelope. Express routes paths without regard to case, so neither does this.
 */
export function sendDoorError(res: Response, error: AppError): void {
  const path = res.req.originalUrl.split('?', 1)[0] ?? '';
  if (GRAPHQL_PATH.test(path)) return sendGraphQLError(res, error);
  if (TRPC_PATH.test(path)) return sendTRPCError(res, error);
  sendError(res, error);
}

/**
 * A success, in the envelope. A list answer (`{data: [...], meta}`) already is one; anything else
 * goes under `data`.
 */
export function sendData(res: Response, status: number, body: unknown): void {
  const page = typeof body === 'object' && body !== null && Array.isArray((body as { data?: unknown }).data) && 'meta' in body;
  const text = JSON.stringify(page ? body : { data: body ?? null });
  res.status(status).setHeader('Content-Type', 'application/json; charset=utf-8');
  // Set here, not by Node from the body: a HEAD answer has no body and must still say its GET's length.
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/**
 * Status and headers of a tRPC-door answer: errors by their AppError, a bearer failure with its
 * challenge in `realm` (challengeHeaders). A request tRPC refuses before any call runs (a batch over
 * the cap, an `input` that is not JSON) gets a JSON body but no Content-Type from tRPC (text/plain);
 * it is set here. A streamed answer (`eagerGeneration`) keeps its own.
 */
export function trpcResponseMeta(realm: string) {
  return (opts: { ctx?: Pick<Context, 'limit'>; errors: readonly unknown[]; data?: readonly unknown[]; eagerGeneration?: boolean }) => {
    // A call a named limit admitted says that limit's standing, as on the REST door (core/rest-door.ts).
    const decision = opts.ctx?.limit.decision;
    const limit = decision ? rateLimitHeaders(decision) : {};
    const [first] = opts.errors;
    if (first === undefined) return { headers: limit };
    const contentType = opts.eagerGeneration ? {} : { 'content-type': 'application/json' };
    // A batch whose calls ended differently keeps tRPC's 207 Multi-Status: one call's 503 and
    // `Retry-After` would tell a client that retries on them to send again writes that committed.
    if (distinctStatuses(opts.data ?? []) > 1) return { headers: { ...limit, ...contentType } };
    const { appError } = toAppError(first);
    return {
      status: appError.status,
      headers: { ...limit, ...contentType, ...appError.headers, ...challengeHeaders(appError, realm) },
    };
  };
}

/** How many HTTP statuses the calls of a tRPC answer ended with (a success is 200; an error says its own). */
function distinctStatuses(results: readonly unknown[]): number {
  const statuses = new Set(
    results.map((result) => {
      if (typeof result !== 'object' || result === null || !('error' in result)) return 200;
      const { error } = result as { error?: { data?: { httpStatus?: unknown } } };
      return typeof error?.data?.httpStatus === 'number' ? error.data.httpStatus : 500;
    }),
  );
  return statuses.size;
}
