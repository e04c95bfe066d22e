import type { RequestHandler } from 'express';
import type { CorsOrigins } from '../config.ts';
import type { AppDeps } from './context.ts';
import { isRestPath, restAllow } from './rest-door.ts';

/** What the service's clients send besides the CORS-safelisted headers. */
const ALLOWED_HEADERS = 'Authorization, Content-Type, Content-Encoding, X-Tenant-ID, X-Request-ID';

/** What an app may read of an answer besides the safelisted headers: its id, its limits, its challenge. */
const EXPOSED_HEADERS = 'X-Request-ID, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, WWW-Authenticate';

/** How long a browser may keep a preflight's answer: Chromium's cap, two hours. */
const PREFLIGHT_MAX_AGE_SECONDS = '7200';

/** The `Access-Control-Allow-Origin` an origin gets: `*`, the origin itself, or none. */
function allowedOrigin(policy: CorsOrigins | undefined, origin: string | undefined): string | null {
  if (policy === undefined || origin === undefined) return null;
  if (policy === '*') return '*';
  return policy.has(origin) ? origin : null;
}

/**
 * The REST door's OPTIONS and CORS, for `/api/v1` (README "CORS"), before the per-IP limit:
 *
 * - an answer to a page of an origin in CORS_ALLOWED_ORIGINS (or any, with `*`), errors and 429s
 *   included, carries `Access-Control-Allow-Origin` and `-Expose-Headers`; no `-Allow-Credentials`,
 *   as the credential is a bearer token, never a cookie;
 * - OPTIONS on a path the door knows is 204 with `Allow`; a preflight from an allowed origin adds
 *   `Access-Control-Allow-Methods` (the same list), `-Allow-Headers` and `-Max-Age`. From another
 *   origin it gets no CORS header, and the browser refuses the call. A preflight is not counted
 *   against the limit (answering it costs less than counting it), so a limited app is refused its
 *   call with a 429 it can read rather than its preflight with one it cannot;
 * - `/platform/v1` answers OPTIONS but never CORS: the operator token has no business in a browser.
 *
 * An OPTIONS on a path the door does not know goes on, to 404 or to the route that has it.
 */
export function restCors(deps: AppDeps): RequestHandler {
  const policy = deps.config.CORS_ALLOWED_ORIGINS;
  const allowAt = restAllow(deps);
  return (req, res, next) => {
    if (!isRestPath(req.path)) return next();
    const browserCallable = req.path.startsWith('/api/v1/');
    // The answer depends on Origin whenever some origins get CORS headers and others do not.
    if (browserCallable && policy !== undefined && policy !== '*') res.vary('Origin');
    const origin = browserCallable ? allowedOrigin(policy, req.get('origin')) : null;
    if (origin) res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': EXPOSED_HEADERS });
    if (req.method !== 'OPTIONS') return next();
    const allow = allowAt(req.path);
    if (allow === null) return next();
    res.setHeader('Allow', allow);
    if (origin && req.get('access-control-request-method')) {
      res.set({
        'Access-Control-Allow-Methods': allow,
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
      });
    }
    res.status(204).end();
  };
}
