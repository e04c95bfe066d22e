import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { AppDeps } from './context.ts';
import { sendDoorError, sendError } from './envelope.ts';
import { AppError } from './errors.ts';
import { toAppError } from './error-normalize.ts';
import { rateLimitedError, rateLimitHeaders } from './rate-limit.ts';
import { getRequestInfo, setRequestInfo } from './request-info.ts';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Echo a well-formed caller `X-Request-ID`, replace any other; expose it on every response. */
export const requestContext: RequestHandler = (req, res, next) => {
  const sent = req.get('x-request-id');
  const requestId = sent && REQUEST_ID.test(sent) ? sent : randomUUID();
  setRequestInfo(req, { requestId, ip: req.ip ?? req.socket.remoteAddress ?? 'unknown' });
  res.setHeader('X-Request-ID', requestId);
  next();
};

/** One year: browsers then never try plain http for the service's host (docs/decisions.md, HSTS). */
export const HSTS = 'max-age=31536000';

/**
 * Headers of every answer. With an https BASE_URL, `Strict-Transport-Security` too, so a browser that
 * has been here once never sends a sign-in or a token over plain http (a network attacker's
 * downgrade); not with an http BASE_URL (local development), where browsers ignore it anyway.
 */
export function securityHeaders(baseUrl: string): RequestHandler {
  const https = new URL(baseUrl).protocol === 'https:';
  return (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    if (https) res.setHeader('Strict-Transport-Security', HSTS);
    next();
  };
}

/** API answers carry credentials and personal data: never cache them. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', 'no-store');
  next();
};

/** The OAuth and discovery endpoints: their errors are RFC 6749's `{error, error_description}`. */
export const PROTOCOL_PATH = /^\/(oauth|\.well-known)\//;

/**
 * CORS on the protocol answers the service writes itself (a limit, an unreadable body, a method an
 * endpoint does not take): a browser app calls `/oauth/token`, userinfo and revocation directly, and
 * without these a refusal reached it as a network error it could not read, `Retry-After` included.
 * Any origin: the client is not known yet at that point, and these answers carry nothing but the refusal.
 */
const PROTOCOL_ERROR_CORS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, WWW-Authenticate',
};

/**
 * What every OAuth error answer says about caching, the service's own (below) and oidc-provider's
 * (oauth/rfc6749.ts): never stored, by HTTP/1.1 caches nor HTTP/1.0 ones (RFC 6749 §5.1).
 */
export const OAUTH_NO_STORE: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * An RFC 6749 error body, what OAuth clients parse, written by the service itself (a limit, a body it
 * cannot read, a method a protocol path does not take), with the CORS headers above.
 */
export function sendOAuthError(res: Response, status: number, error: string, description: string, headers: Record<string, string> = {}) {
  res
    .status(status)
    .set({ ...PROTOCOL_ERROR_CORS, ...OAUTH_NO_STORE, ...headers })
    .json({ error, error_description: description });
}

/**
 * The spec's 1,000 calls per minute per client IP, over every path but the health probes; an admitted
 * call carries its standing in `RateLimit-*` (no `Retry-After`), as a refused one does.
 */
export function globalRateLimit(deps: AppDeps): RequestHandler {
  return async (req, res, next) => {
    if (req.path === '/healthz' || req.path === '/readyz') return next();
    try {
      const decision = await deps.rateLimits.consume('global', getRequestInfo(req).ip);
      if (!decision.allowed && PROTOCOL_PATH.test(req.path)) {
        // OAuth clients parse RFC 6749 error bodies, not the envelope.
        return sendOAuthError(res, 429, 'RATE_LIMITED', 'Too many requests; try again later', rateLimitHeaders(decision));
      }
      if (!decision.allowed) return sendDoorError(res, rateLimitedError(decision));
      // Every answer says where its caller stands (RateLimit-*); a call a named limit admits says that
      // limit's instead (core/rest-door.ts, oauth/routes.ts).
      res.set(rateLimitHeaders(decision));
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** CONTRACT: a request body over 1 MiB is refused with 413 (code BAD_REQUEST). */
export const MAX_BODY_BYTES = 1024 * 1024;
export const BODY_TOO_LARGE = 'The request body is larger than 1 MiB';

/** How deep a JSON body may nest; no input of any procedure comes near (a user's metadata is free JSON). */
export const MAX_JSON_DEPTH = 64;

/** Whether a parsed JSON value nests deeper than `max` levels; walked without recursion. */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth >= max) return true;
    for (const member of Object.values(item)) pending.push([member, depth + 1]);
  }
  return false;
}

/**
 * A JSON body nested deeper than MAX_JSON_DEPTH is 400 BAD_REQUEST, in the door's shape, before any
 * procedure sees it: tRPC serialises the parsed body again (a stack overflow past a few thousand levels
 * was an unlogged 500), zod's checks of free JSON overflowed too (400 "Maximum call stack size
 * exceeded"), and NUL deeper than the text check looks reached PostgreSQL (500).
 */
export const limitJsonDepth: RequestHandler = (req, res, next) => {
  if (!nestsDeeperThan(req.body, MAX_JSON_DEPTH)) return next();
  sendDoorError(res, new AppError('BAD_REQUEST', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`));
};

/**
 * Refuses a body over MAX_BODY_BYTES without reading the rest: the answer says the connection closes,
 * so Node ends it once the answer is out instead of draining what the client still sends.
 */
function refuseLargeBody(req: Request, res: Response, answer: (res: Response) => void): void {
  req.removeAllListeners('data');
  req.pause();
  res.setHeader('Connection', 'close');
  answer(res);
}

/**
 * Reads the body into `req.body` (a Buffer) for a handler that would read any size itself (GraphQL
 * Yoga), up to MAX_BODY_BYTES. Past it, `answer` writes the refusal: at once when Content-Length says
 * so, and as soon as the count passes it for a body streamed without one (chunked). An empty body is
 * left to the handler.
 */
export function limitBody(answer: (res: Response) => void): RequestHandler {
  return (req, res, next) => {
    const length = req.headers['content-length'];
    if (length === undefined ? req.headers['transfer-encoding'] === undefined : Number(length) === 0) return next();
    if (Number(length) > MAX_BODY_BYTES) return refuseLargeBody(req, res, answer);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) refuseLargeBody(req, res, answer);
      else chunks.push(chunk);
    });
    req.once('end', () => {
      if (res.headersSent) return;
      req.body = Buffer.concat(chunks);
      next();
    });
    // A request that breaks off after its refusal was answered has nothing more to be told.
    req.once('error', (error) => {
      if (!res.headersSent) next(error);
    });
  };
}

export const notFound: RequestHandler = (req, res) => {
  sendError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.baseUrl}${req.path}`));
};

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  /** The text that failed to parse (body-parser keeps it on `entity.parse.failed`). */
  body?: unknown;
}

/**
 * Why a body failed to parse: the JSON parser refuses valid JSON whose top level is not an object
 * or array (`null`, `5`, `"x"`), and saying "not valid JSON" of those sends the caller looking for a
 * syntax error that is not there.
 */
function unparsedBodyMessage({ body }: BodyParserError): string {
  if (typeof body === 'string' && isJsonScalar(body)) return 'The request body must be a JSON object';
  return 'The request body is not valid JSON';
}

function isJsonScalar(text: string): boolean {
  const first = text.trimStart()[0];
  if (first === undefined || first === '{' || first === '[') return false;
  try {
    JSON.parse(text);
    return true;
  } catch (error) {
    if (error instanceof SyntaxError) return false;
    throw error;
  }
}

/**
 * Any other client error body-parser passes on (an http-errors 4xx it marks safe to show): a
 * compressed body that does not decompress (corrupt or truncated gzip, deflate or br), a body shorter
 * than its Content-Length.
 */
function isUnreadableBody({ status, expose }: BodyParserError): boolean {
  return expose === true && typeof status === 'number' && status >= 400 && status < 500;
}

/**
 * Last stop for errors outside tRPC: body parsing, and anything a plain route threw; on /graphql and
 * /trpc in that door's error shape.
 */
export function errorHandler(deps: AppDeps): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) return next(error);
    const { type } = (error ?? {}) as BodyParserError;
    if (type === 'entity.too.large') return sendDoorError(res, new AppError('BAD_REQUEST', BODY_TOO_LARGE, { status: 413 }));
    if (type === 'entity.parse.failed') {
      return sendDoorError(res, new AppError('BAD_REQUEST', unparsedBodyMessage(error as BodyParserError)));
    }
    // The router could not decode a path parameter (`%`, `%FF`): the path names nothing.
    if (error instanceof URIError) return sendDoorError(res, new AppError('NOT_FOUND', `No such resource at ${req.method} ${req.path}`));
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
      return sendDoorError(res, new AppError('BAD_REQUEST', 'Unsupported body encoding'));
    }
    if (isUnreadableBody((error ?? {}) as BodyParserError)) {
      return sendDoorError(res, new AppError('BAD_REQUEST', 'The request body could not be read (is its Content-Encoding right?)'));
    }
    const { appError, internal } = toAppError(error);
    if (internal) deps.log.error('unhandled error', { requestId: getRequestInfo(req).requestId, error });
    sendDoorError(res, appError);
  };
}

/**
 * Node's HTTP parser refuses some requests before Express sees them (a request line and headers over
 * 16 KiB: 431; a malformed request: 400) and would answer with an empty body. A `clientError`
 * listener on the server answers them in the envelope, with an X-Request-ID, like every other error.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const requestId = randomUUID();
  const message = tooLarge ? 'The request line and headers are larger than 16 KiB' : 'The request could not be parsed as HTTP';
  const body = JSON.stringify({ error: { code: 'BAD_REQUEST', message }, meta: { request_id: requestId } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
