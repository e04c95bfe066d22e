import type { Request, RequestHandler, Response } from 'express';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { appRouter, procedureMeta } from '../router.ts';
import { createContext, type AppDeps } from './context.ts';
import { AppError, isAppErrorCode, type FieldProblem } from './errors.ts';
import { toAppError } from './error-normalize.ts';
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

/** For errors raised outside tRPC (body parsing, unknown paths, the global limit). */
export function sendError(res: Response, error: AppError): void {
  const { requestId } = getRequestInfo(res.req);
  res.status(error.status).set(error.headers).json(errorEnvelope(requestId, error));
}

/** A list answer (`{data: [], meta}`) is already enveloped; anything else is put under `data`. */
function isPage(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const keys = Object.keys(body);
  return keys.length === 2 && Array.isArray((body as { data?: unknown }).data) && typeof (body as { meta?: unknown }).meta === 'object';
}

interface OpenApiErrorBody {
  message?: string;
  data?: Partial<ErrorData>;
}

function envelopeFor(status: number, body: unknown, requestId: string): unknown {
  if (status < 400) return isPage(body) ? body : { data: body ?? null };
  const { message, data } = (body ?? {}) as OpenApiErrorBody;
  const code = isAppErrorCode(data?.appCode) ? data.appCode : 'INTERNAL';
  // The adapter replaces the message of input-validation errors with its own; the details say more.
  const text = data?.details ? 'The request is invalid' : (message ?? 'Something went wrong');
  return errorEnvelope(requestId, new AppError(code, text, { details: data?.details }));
}

/** Status and headers of a tRPC answer: errors by their AppError, creations 201 on REST. */
export function responseMeta(opts: { paths?: readonly string[]; errors: readonly unknown[] }, rest: boolean) {
  const [first] = opts.errors;
  if (first !== undefined) {
    const { appError } = toAppError(first);
    return { status: appError.status, headers: appError.headers };
  }
  const status = rest ? (procedureMeta.get(opts.paths?.[0] ?? '')?.successStatus ?? 200) : 200;
  return { status };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The REST door: the spec's exact paths through trpc-to-openapi, every answer rewritten into the
 * envelope. The adapter writes its JSON once with `res.end`; we wrap that one call.
 */
export function restDoor(deps: AppDeps): RequestHandler {
  const handler = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext: ({ req }) => createContext(deps, req),
    responseMeta: (opts) => responseMeta(opts, true),
  });
  return (req: Request, res: Response, next) => {
    if (!req.path.startsWith('/api/v1/') && !req.path.startsWith('/platform/v1/')) return next();
    if (BODY_METHODS.has(req.method) && !req.headers['content-type'] && req.body === undefined) {
      // A bodiless POST (logout, resend …) is an empty JSON object, not an unsupported media type.
      req.headers['content-type'] = 'application/json';
      req.body = {};
    }
    const { requestId } = getRequestInfo(req);
    const end = res.end.bind(res) as (chunk?: unknown) => Response;
    res.end = ((chunk?: unknown) => {
      if (res.statusCode < 400 && typeof chunk === 'string') {
        // Successes are enveloped as text, without parsing the adapter's JSON again: a page
        // (`{"data":[…],"meta":…}`, the only output whose first key is `data`) is already one.
        const enveloped = chunk.startsWith('{"data":[') ? chunk : `{"data":${chunk}}`;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('Content-Length', Buffer.byteLength(enveloped));
        return end(enveloped);
      }
      let body: unknown;
      try {
        body = typeof chunk === 'string' ? JSON.parse(chunk) : undefined;
      } catch (error) {
        deps.log.error('REST adapter wrote a body that is not JSON', { requestId, error });
        body = undefined;
      }
      const enveloped = JSON.stringify(envelopeFor(res.statusCode, body, requestId));
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(enveloped));
      return end(enveloped);
    }) as Response['end'];
    // No procedure matched: hand the untouched response on to the routes after this one.
    return handler(req, res, (error?: unknown) => {
      res.end = end as Response['end'];
      next(error);
    });
  };
}
