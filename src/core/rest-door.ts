import type { Request, RequestHandler, Response } from 'express';
import type { AnyProcedure } from '@trpc/server';
import { z } from 'zod';
import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import { appRouter } from '../router.ts';
import { createContext, type AppDeps, type Context } from './context.ts';
import { challengeHeaders, sendData, sendError } from './envelope.ts';
import { AppError, methodNotAllowed } from './errors.ts';
import { toAppError, unknownFieldProblem } from './error-normalize.ts';
import { pathParamNames } from './path-ids.ts';
import { rateLimitHeaders } from './rate-limit.ts';
import { getRequestInfo } from './request-info.ts';
import type { Meta } from './trpc.ts';

interface Route {
  method: string;
  /** The spec's path template, for metrics (`/api/v1/users/{id}`). */
  template: string;
  /** The template's lower-cased literal start (`/api/v1/users/`): a cheap test before the pattern. */
  prefix: string;
  pattern: RegExp;
  /** The procedure's path in the router (`users.get`) and the procedure itself. */
  path: string;
  procedure: AnyProcedure;
  /** GET and DELETE read their input from the query string, the others from the JSON body. */
  fromBody: boolean;
  successStatus: number;
  /**
   * The body members a non-strict input accepts (an id-only input such as `rotate-secret`'s, shared
   * with GET and DELETE where extra query parameters are ignored); null when the input is strict
   * itself or not an object. CONTRACT: an unknown body member is 400, whatever the schema says.
   */
  bodyMembers: Set<string> | null;
  /**
   * The path's parameters (`id`, `key`, `user_id`): the path names them, so a body member of the same
   * name is refused (400, as an unknown member), never silently overridden by the path.
   */
  pathParams: Set<string>;
}

/** The object an input schema validates, through `.prefault()`, `.default()`, `.optional()` and pipes. */
function objectOf(schema: unknown): z.ZodObject | null {
  let current = schema;
  for (let depth = 0; depth < 10; depth++) {
    if (current instanceof z.ZodObject) return current;
    if (current instanceof z.ZodPrefault || current instanceof z.ZodDefault || current instanceof z.ZodOptional) {
      current = current.def.innerType;
    } else if (current instanceof z.ZodPipe) {
      current = current.def.in;
    } else {
      return null;
    }
  }
  return null;
}

function looseMembers(procedure: AnyProcedure): Set<string> | null {
  const inputs = (procedure._def as { inputs?: unknown[] }).inputs ?? [];
  const object = inputs.length === 1 ? objectOf(inputs[0]) : null;
  if (!object || object.def.catchall instanceof z.ZodNever) return null;
  return new Set(Object.keys(object.shape));
}

/** What tRPC's server-side caller hands a procedure (and its own HTTP handler too). */
interface ProcedureCall {
  path: string;
  getRawInput: () => Promise<unknown>;
  ctx: Context;
  type: 'query' | 'mutation';
  signal: undefined;
  batchIndex: number;
}

/**
 * Calls a procedure as `createCaller(ctx).users.get(input)` would, without building a caller and its
 * proxies for every request: the same middlewares, input and output parsing, and errors.
 */
function invoke(route: Route, ctx: Context, input: unknown): Promise<unknown> {
  const call = route.procedure as unknown as (opts: ProcedureCall) => Promise<unknown>;
  const type = route.procedure._def.type === 'mutation' ? 'mutation' : 'query';
  return call({ path: route.path, getRawInput: () => Promise.resolve(input), ctx, type, signal: undefined, batchIndex: 0 });
}

function routes(): Route[] {
  const procedures = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
  return Object.entries(procedures).flatMap(([path, procedure]) => {
    const meta = procedure._def.meta as Meta | undefined;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) return [];
    return [
      {
        method: openapi.method,
        template: openapi.path,
        prefix: normalizePath(openapi.path).split('{')[0]?.toLowerCase() ?? '',
        pattern: getPathRegExp(normalizePath(openapi.path)),
        path,
        procedure,
        fromBody: openapi.method !== 'GET' && openapi.method !== 'DELETE',
        successStatus: meta?.successStatus ?? 200,
        bodyMembers: openapi.method !== 'GET' && openapi.method !== 'DELETE' ? looseMembers(procedure) : null,
        pathParams: pathParamNames(openapi.path),
      },
    ];
  });
}

/** A malformed escape (`%E0%A4%A`) stays as it is: it then matches no id and is NOT_FOUND, not a 500. */
function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The query string as the procedure sees it: one value per key, repeated keys as arrays. */
function queryInput(req: Request): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(req.url.slice(req.url.indexOf('?') + 1 || req.url.length))) {
    const seen = out[key];
    if (seen === undefined) out[key] = value;
    else out[key] = Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/**
 * The JSON body as the procedure sees it. A member the input does not take is 400 with its name in
 * `details`, and so is a member named as one of the path's parameters (`{"id": …}` on
 * `PATCH /users/{id}`): the path decides which resource is meant, and a body that says otherwise (or
 * says it again) is refused rather than ignored. The tRPC and GraphQL doors take the id in the input
 * itself and are not concerned.
 */
function bodyInput(req: Request, members: Set<string> | null, pathParams: Set<string>): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) {
    // The JSON parser left it alone: a body sent under another content type (or none, or one that
    // only looks like JSON's, `application/jsonx`) is refused, never read as an empty object.
    const length = Number(req.headers['content-length'] ?? 0);
    if (length > 0 || req.headers['transfer-encoding']) {
      throw new AppError('BAD_REQUEST', 'Send the body as application/json');
    }
    return {};
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('BAD_REQUEST', 'The request body must be a JSON object');
  const unknown = Object.keys(body).filter((key) => pathParams.has(key) || (members !== null && !members.has(key)));
  if (unknown.length > 0) {
    throw new AppError('BAD_REQUEST', 'The request is invalid', {
      details: unknown.map((key) => (pathParams.has(key) ? { path: key, message: PATH_PARAM_IN_BODY } : unknownFieldProblem(key))),
    });
  }
  return body as Record<string, unknown>;
}

/** What a body member named as one of the path's parameters is told: the path names the resource. */
const PATH_PARAM_IN_BODY = 'is given by the path; leave it out of the body';

/** Whether `path` (normalised, as the door matches it) is a REST path: the door answers only those. */
export function isRestPath(path: string): boolean {
  return path.startsWith('/api/v1/') || path.startsWith('/platform/v1/');
}

/** The door's routes whose template matches `path` (a REST path); none for a path the door does not know. */
function routesAt(deps: AppDeps, table: Route[], requestPath: string): Route[] {
  if (!isRestPath(requestPath)) return [];
  if (!deps.config.PLATFORM_API_TOKEN && requestPath.startsWith('/platform/v1/')) return [];
  const path = normalizePath(requestPath);
  const lowerPath = path.toLowerCase();
  return table.filter((r) => lowerPath.startsWith(r.prefix) && r.pattern.test(path));
}

/** What `Allow` says of a path: its routes' methods, HEAD with GET, and OPTIONS (core/cors.ts answers it). */
function allowOf(matching: Route[]): string {
  const methods = new Set(matching.map((r) => r.method));
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return [...methods].join(', ');
}

/**
 * `Allow` of a REST path, or null for a path the door does not know (and for the platform API when
 * PLATFORM_API_TOKEN is unset): what an OPTIONS request and a CORS preflight are told (core/cors.ts).
 */
export function restAllow(deps: AppDeps): (path: string) => string | null {
  const table = routes();
  return (path) => {
    const matching = routesAt(deps, table, path);
    return matching.length === 0 ? null : allowOf(matching);
  };
}

/**
 * A REST path the door knows, asked with a method none of its routes takes (and that no other route
 * answered): 405 with `Allow` (RFC 9110 §15.5.6), code BAD_REQUEST, in the envelope, as the tRPC door
 * and the protocol paths answer a wrong method. A path no route has stays 404 (`notFound`), and so does
 * the platform API when PLATFORM_API_TOKEN is unset (CONTRACT: it does not exist then).
 */
export function restMethodNotAllowed(deps: AppDeps): RequestHandler {
  const table = routes();
  return (req, res, next) => {
    const matching = routesAt(deps, table, req.path);
    if (matching.length === 0) return next();
    // Reading an item that has no read endpoint (`GET /api/v1/api-keys/{id}`) answers as a missing item
    // does, 404: a client checking that a deleted key is gone is told so.
    if ((req.method === 'GET' || req.method === 'HEAD') && matching.every((r) => r.template.includes('{'))) return next();
    sendError(res, methodNotAllowed(req.method, req.path, allowOf(matching)));
  };
}

/**
 * A call a named limit admitted (sign-in, password, social sign-in) answers that limit's `RateLimit-*`
 * in place of the global one's, so a client sees how many attempts it has left before the 429. A
 * refused call's own headers (Retry-After with them) come with its error and win.
 */
function setLimitHeaders(res: Response, ctx: Context): void {
  if (ctx.limit.decision) res.set(rateLimitHeaders(ctx.limit.decision));
}

/**
 * The REST door: the spec's exact paths (from each procedure's `meta.openapi`, the same meta that
 * trpc-to-openapi turns into the OpenAPI document), each procedure called as the router's caller
 * calls it, every answer in the envelope. Matching ignores a trailing slash, as the spec's paths have
 * some. A HEAD request is answered as its GET, without the body.
 */
export function restDoor(deps: AppDeps): RequestHandler {
  const table = routes();
  return async (req, res, next) => {
    if (!isRestPath(req.path)) return next();
    const path = normalizePath(req.path);
    const lowerPath = path.toLowerCase();
    // HEAD is a GET without the body (RFC 9110 9.3.2): same status and headers; Express sends no body.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    let params: Record<string, string> | undefined;
    const route = table.find((r) => {
      if (r.method !== method || !lowerPath.startsWith(r.prefix)) return false;
      const match = r.pattern.exec(path);
      if (match) params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, safeDecode(v)]));
      return match !== null;
    });
    if (!route) return next();
    res.locals.route = route.template;
    const ctx = createContext(deps, req);
    try {
      const input = { ...(route.fromBody ? bodyInput(req, route.bodyMembers, route.pathParams) : queryInput(req)), ...params };
      const data = await invoke(route, ctx, input);
      setLimitHeaders(res, ctx);
      sendData(res, ctx.success.status ?? route.successStatus, data);
    } catch (error) {
      const { appError, internal } = toAppError(error);
      if (internal) deps.log.error('unhandled error', { requestId: getRequestInfo(req).requestId, path: req.path, error });
      setLimitHeaders(res, ctx);
      sendError(res, appError, challengeHeaders(appError, deps.config.BASE_URL));
    }
  };
}
