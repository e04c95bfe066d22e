import { IncomingMessage } from 'node:http';
import express, { type Request, type Response, type Router } from 'express';
import type { AppDeps } from '../core/context.ts';
import { sendOAuthError } from '../core/http.ts';
import { rateLimitHeaders } from '../core/rate-limit.ts';
import { getRequestInfo, setRequestInfo } from '../core/request-info.ts';
import { interactionRoutes } from './interactions.ts';
import { PAGE_CSP, STYLESHEET, STYLESHEET_PATH } from './pages.ts';
import { DEFAULT_SCOPE, OAUTH_ROUTES } from './provider.ts';

/** A GET route answers HEAD too, in oidc-provider's router as in Express. */
const READ = ['GET', 'HEAD'] as const;
/** The CORS preflight a browser app sends first (oidc-provider's CORS routes, and ours for the JWKS). */
const PREFLIGHT = 'OPTIONS';

/**
 * The paths oidc-provider answers, with every method each takes as provider.ts configures it; anything
 * else under /oauth is ours (interactions) or a 404 in our envelope.
 */
const PROVIDER_METHODS = new Map<string, readonly string[]>([
  [OAUTH_ROUTES.authorization, [...READ, 'POST']],
  [OAUTH_ROUTES.token, ['POST', PREFLIGHT]],
  [OAUTH_ROUTES.userinfo, [...READ, 'POST', PREFLIGHT]],
  [OAUTH_ROUTES.revocation, ['POST', PREFLIGHT]],
  [OAUTH_ROUTES.introspection, ['POST', PREFLIGHT]],
  [OAUTH_ROUTES.end_session, [...READ, 'POST']],
  [`${OAUTH_ROUTES.end_session}/confirm`, ['POST']],
  [`${OAUTH_ROUTES.end_session}/success`, READ],
  ['/.well-known/openid-configuration', [...READ, PREFLIGHT]],
  ['/.well-known/oauth-authorization-server', [...READ, PREFLIGHT]],
]);
const RESUME = new RegExp(`^${OAUTH_ROUTES.authorization}/[A-Za-z0-9_-]+$`);
/** Served by `wellKnownRoutes` before these routes: only its other methods arrive here. */
const JWKS_METHODS: readonly string[] = [...READ, PREFLIGHT];

/** The methods a protocol path takes, or undefined for a path that is none. */
function methodsOf(path: string): readonly string[] | undefined {
  if (path === OAUTH_ROUTES.jwks) return JWKS_METHODS;
  return PROVIDER_METHODS.get(path) ?? (RESUME.test(path) ? READ : undefined);
}

/** Endpoints whose form bodies may also come as JSON (CONTRACT: "/oauth/token accepts … (and JSON)"). */
const FORM_ENDPOINTS = new Set<string>([OAUTH_ROUTES.token, OAUTH_ROUTES.revocation, OAUTH_ROUTES.introspection]);
const BODY_LIMIT = 56 * 1024;

/** Provider pages may carry oidc-provider's one inline script (form_post); it adds that script's hash to script-src. */
const PROVIDER_CSP = `${PAGE_CSP}; script-src 'self'`;

/**
 * A method a protocol path does not take: 405 with `Allow` (RFC 9110 §15.5.6) and an RFC 6749 error
 * body, where Koa's bare `404 Not Found` text used to answer.
 */
function methodNotAllowed(req: Request, res: Response, methods: readonly string[]): void {
  const allowed = methods.filter((method) => method !== 'HEAD');
  sendOAuthError(res, 405, 'invalid_request', `${req.method} is not supported at ${req.path}; use ${allowed.join(' or ')}`, {
    Allow: methods.join(', '),
  });
}

/**
 * A plain OPTIONS (no CORS preflight) on a protocol path that takes OPTIONS: 204 with the `Allow` its
 * 405s name (RFC 9110 §9.3.7), as the REST door answers; oidc-provider answers only preflights and
 * left Koa's bare `404 Not Found` text to the rest.
 */
function allowOnly(res: Response, methods: readonly string[]): void {
  res.status(204).set('Allow', methods.join(', ')).end();
}

class BodyError extends Error {}

/**
 * The body, up to BODY_LIMIT. Past it the rest is left unread, not destroyed: destroying the request
 * would close a keep-alive connection under the client's next request (ECONNRESET); Node discards
 * what is left once the answer is sent.
 */
function readBody(req: Request): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    function onData(chunk: Buffer) {
      size += chunk.length;
      if (size <= BODY_LIMIT) return void chunks.push(chunk);
      stop();
      reject(new BodyError('the request body is too large'));
    }
    function onEnd() {
      stop();
      resolve(Buffer.concat(chunks).toString('utf8'));
    }
    function onError(error: Error) {
      stop();
      reject(error);
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** A JSON object of scalar members as the form body it stands for. */
function jsonToForm(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new BodyError('the request body is not valid JSON', { cause });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BodyError('the JSON body must be an object');
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(parsed)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') form.append(key, String(value));
    else if (value !== null) throw new BodyError(`the JSON member ${key} must be a string`);
  }
  return form.toString();
}

/** A POSTed authorization request's form with the default scope when it names none (see provider.ts `defaultScope`). */
function withDefaultScope(text: string): string {
  const form = new URLSearchParams(text);
  if (form.get('scope')) return text;
  form.set('scope', DEFAULT_SCOPE);
  return form.toString();
}

/**
 * How a POST body must change before oidc-provider reads it, if at all: JSON where it reads only
 * forms, and the default scope of an authorization request.
 */
function bodyRewrite(req: Request): ((text: string) => string) | undefined {
  if (req.method !== 'POST') return undefined;
  if (FORM_ENDPOINTS.has(req.path) && req.is('application/json') === 'application/json') return jsonToForm;
  if (req.path === OAUTH_ROUTES.authorization && req.is('application/x-www-form-urlencoded')) return withDefaultScope;
  return undefined;
}

/**
 * A body sent compressed (`Content-Encoding: gzip`): oidc-provider would read its bytes as a form and
 * find no client in it, answering 401 invalid_client to a client that did authenticate. It is a
 * request the server cannot read: 400 invalid_request (RFC 6749 §5.2), naming the encoding it takes.
 */
function compressedBody(req: Request): string | undefined {
  const encoding = req.get('content-encoding')?.trim().toLowerCase();
  return req.method === 'POST' && encoding && encoding !== 'identity' ? encoding : undefined;
}

/**
 * oidc-provider reads bodies from the request stream. A body that must change is read here and the
 * request handed on as a new one over the same socket, whose stream is the form body it stands for.
 */
async function asFormRequest(req: Request, rewrite: (text: string) => string): Promise<IncomingMessage> {
  const body = rewrite(await readBody(req));
  const forwarded = new IncomingMessage(req.socket);
  forwarded.method = req.method;
  forwarded.url = req.url;
  forwarded.httpVersion = req.httpVersion;
  forwarded.httpVersionMajor = req.httpVersionMajor;
  forwarded.httpVersionMinor = req.httpVersionMinor;
  forwarded.headers = {
    ...req.headers,
    'content-type': 'application/x-www-form-urlencoded',
    'content-length': String(Buffer.byteLength(body)),
  };
  forwarded.push(body);
  forwarded.push(null);
  // Fully received: without this, the end of the stream reads as an aborted request and closes the socket.
  forwarded.complete = true;
  setRequestInfo(forwarded, getRequestInfo(req));
  return forwarded;
}

/**
 * Express has applied TRUST_PROXY (client IP, protocol, host); oidc-provider (Koa) trusts forwarded
 * headers wholesale when told to, so it is told Express's verdict and nothing a client made up. It
 * then sets Secure cookies behind a TLS-terminating proxy, and never for a spoofed header.
 */
function forwardVerdict(req: Request): void {
  req.headers['x-forwarded-for'] = getRequestInfo(req).ip;
  req.headers['x-forwarded-proto'] = req.protocol;
  req.headers['x-forwarded-host'] = req.host;
}

/**
 * RFC 9110 §11.4 (and RFC 6750 §2.1, RFC 7617 §2): `credentials = auth-scheme [ 1*SP ( token68 /
 * #auth-param ) ]`, one space or more after the scheme. oidc-provider splits the header on single
 * spaces, so `Bearer  <token>` or `Basic  <credentials>` read as malformed (400 at userinfo, 401
 * invalid_client at the token endpoint). The scheme and its credentials are handed on one space apart.
 */
function singleSpacedCredentials(req: Request): void {
  const authorization = req.headers.authorization;
  if (authorization) req.headers.authorization = authorization.replace(/^(\S+) {2,}/, '$1 ');
}

/** A cookie attribute that browsers honour only on a Secure cookie. */
const SAME_SITE_NONE = /;\s*samesite=none/i;

/**
 * oidc-provider's browser-session cookie is `SameSite=None` (a form posted to `/oauth/authorize` from
 * the application's site must carry it), and browsers keep such a cookie only when it is `Secure`,
 * that is over https. Over plain http (local development, tests) it is sent `SameSite=Lax` instead, so
 * the hosted sign-in is remembered between authorizations there too; only a cross-site POST arrives
 * without it, as it would anyway. Rewritten as the headers go out: `cookies` (Koa) sets them through
 * `OutgoingMessage.prototype.setHeader`, past any wrapper of the response's own `setHeader`.
 */
function laxSessionCookieOverHttp(req: Request, res: Response): void {
  if (req.secure) return;
  const writeHead = res.writeHead;
  res.writeHead = function laxCookies(this: Response, ...args: unknown[]) {
    const cookies = this.getHeader('set-cookie');
    if (Array.isArray(cookies) && cookies.some((cookie) => SAME_SITE_NONE.test(cookie))) {
      this.setHeader(
        'set-cookie',
        cookies.map((cookie) => cookie.replace(SAME_SITE_NONE, '; samesite=lax')),
      );
    }
    return Reflect.apply(writeHead, this, args) as Response;
  } as typeof res.writeHead;
}

/**
 * `/oauth/*` and the OpenID discovery document: the hosted sign-in (ours), then oidc-provider at the
 * spec's paths, after the `/oauth/token` limit (60/min/IP, RFC error body). The JWKS is served by
 * `wellKnownRoutes`, before this.
 */
export function oauthRoutes(deps: AppDeps): Router {
  const callback = deps.oauth.provider.callback();
  const trustProxy = deps.config.trustProxy !== false;
  const routes = express.Router();

  routes.get(STYLESHEET_PATH, (_req, res) => {
    res.type('text/css').set('Cache-Control', 'public, max-age=3600').send(STYLESHEET);
  });
  routes.use(interactionRoutes(deps));

  routes.use(async (req, res, next) => {
    const methods = methodsOf(req.path);
    if (!methods) return next();
    if (!methods.includes(req.method)) return methodNotAllowed(req, res, methods);
    if (req.method === 'OPTIONS' && !req.headers['access-control-request-method']) return allowOnly(res, methods);
    if (req.path === OAUTH_ROUTES.jwks) return next();
    try {
      if (req.method === 'POST' && req.path === OAUTH_ROUTES.token) {
        const decision = await deps.rateLimits.consume('oauthToken', getRequestInfo(req).ip);
        if (!decision.allowed) {
          return sendOAuthError(res, 429, 'RATE_LIMITED', 'Too many token requests; try again later', rateLimitHeaders(decision));
        }
        res.set(rateLimitHeaders(decision));
      }
      // The client went away while we waited (a closed connection): there is no one to answer, and
      // oidc-provider would find the body stream gone.
      if (req.destroyed) return;
      const encoding = compressedBody(req);
      if (encoding) {
        return sendOAuthError(
          res,
          400,
          'invalid_request',
          `a body with Content-Encoding ${encoding} is not read here; send it uncompressed`,
          {
            'Accept-Encoding': 'identity',
          },
        );
      }
      if (trustProxy) forwardVerdict(req);
      singleSpacedCredentials(req);
      laxSessionCookieOverHttp(req, res);
      res.setHeader('Content-Security-Policy', PROVIDER_CSP);
      const rewrite = bodyRewrite(req);
      await callback(rewrite ? await asFormRequest(req, rewrite) : req, res);
    } catch (error) {
      if (error instanceof BodyError) return sendOAuthError(res, 400, 'invalid_request', error.message);
      next(error);
    }
  });
  return routes;
}
