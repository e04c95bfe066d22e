import type { Request, RequestHandler } from 'express';
import type { AnyProcedure } from '@trpc/server';
import { getPathRegExp, normalizePath } from 'trpc-to-openapi';
import { appRouter, createCaller } from '../router.ts';
import { createContext, type AppDeps } from './context.ts';
import { sendData, sendError } from './envelope.ts';
import { AppError } from './errors.ts';
import { toAppError } from './error-normalize.ts';
import { getRequestInfo } from './request-info.ts';
import type { Meta } from './trpc.ts';

interface Route {
  method: string;
  /** The spec's path template, for metrics (`/api/v1/users/{id}`). */
  template: string;
  pattern: RegExp;
  /** `users.get` → ['users', 'get'] on the caller. */
  segments: string[];
  /** GET and DELETE read their input from the query string, the others from the JSON body. */
  fromBody: boolean;
  successStatus: number;
}

type CallerNode = { [key: string]: CallerNode } & ((input: unknown) => Promise<unknown>);

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
        pattern: getPathRegExp(normalizePath(openapi.path)),
        segments: path.split('.'),
        fromBody: openapi.method !== 'GET' && openapi.method !== 'DELETE',
        successStatus: meta?.successStatus ?? 200,
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

function bodyInput(req: Request): Record<string, unknown> {
  const body: unknown = req.body;
  if (body === undefined || body === null) {
    const type = req.headers['content-type'];
    const length = Number(req.headers['content-length'] ?? 0);
    if (type && !/^application\/([\w.+-]+\+)?json/i.test(type) && (length > 0 || req.headers['transfer-encoding'])) {
      throw new AppError('BAD_REQUEST', 'Send the body as application/json', { status: 415 });
    }
    return {};
  }
  if (typeof body !== 'object' || Array.isArray(body)) throw new AppError('BAD_REQUEST', 'The request body must be a JSON object');
  return body as Record<string, unknown>;
}

/**
 * The REST door: the spec's exact paths (from each procedure's `meta.openapi`, the same meta that
 * trpc-to-openapi turns into the OpenAPI document), called through the router's caller, every answer
 * in the envelope. Matching ignores a trailing slash, as the spec's paths have some.
 */
export function restDoor(deps: AppDeps): RequestHandler {
  const table = routes();
  return async (req, res, next) => {
    if (!req.path.startsWith('/api/v1/') && !req.path.startsWith('/platform/v1/')) return next();
    const path = normalizePath(req.path);
    let params: Record<string, string> | undefined;
    const route = table.find((r) => {
      if (r.method !== req.method) return false;
      const match = r.pattern.exec(path);
      if (match) params = Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, safeDecode(v)]));
      return match !== null;
    });
    if (!route) return next();
    res.locals.route = route.template;
    try {
      const input = { ...(route.fromBody ? bodyInput(req) : queryInput(req)), ...params };
      const caller = createCaller(createContext(deps, req)) as unknown as CallerNode;
      const procedure = route.segments.reduce<CallerNode>((node, key) => node[key] as CallerNode, caller);
      sendData(res, route.successStatus, await procedure(input));
    } catch (error) {
      const { appError, internal } = toAppError(error);
      if (internal) deps.log.error('unhandled error', { requestId: getRequestInfo(req).requestId, path: req.path, error });
      sendError(res, appError);
    }
  };
}
