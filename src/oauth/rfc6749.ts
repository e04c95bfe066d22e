import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import { OAUTH_NO_STORE } from '../core/http.ts';

/** The routes where a client authenticates itself (RFC 6749 §2.3, RFC 7662 §2.1, RFC 7009 §2.1). */
const CLIENT_AUTH_ROUTES = new Set(['token', 'introspection', 'revocation']);

/** RFC 4648 base64 with correct padding, as oidc-provider reads it (shared/client_auth.js). */
function isBase64(value: string): boolean {
  const match = /^([A-Za-z0-9+/]*)(={0,2})$/.exec(value);
  const data = match?.[1];
  const padding = match?.[2] ?? '';
  if (!data) return false;
  const remainder = data.length % 4;
  if (!padding) return remainder !== 1;
  return (data.length + padding.length) % 4 === 0 && padding.length === 4 - remainder;
}

/** A form-encoded part of Basic credentials (RFC 6749 §2.3.1), decoded, or undefined when it is no such thing. */
function formDecoded(text: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text.replace(/\+/g, '%20'));
  } catch (error) {
    // A stray `%` or an encoded byte that is no UTF-8: credentials nobody can read, the answer itself.
    if (error instanceof URIError) return undefined;
    throw error;
  }
  return /^[\x20-\x7E]*$/.test(decoded) ? decoded : undefined;
}

/**
 * The client id and secret of an `Authorization` header, or undefined when it carries none this
 * server reads: another scheme (`Bearer`, `Digest`), or Basic that is not base64 of a form-encoded
 * `client_id:client_secret`. Mirrors what oidc-provider accepts.
 */
function basicCredentials(authorization: string): { id: string; secret: string } | undefined {
  const [scheme, value, ...rest] = authorization.split(' ');
  if (scheme?.toLowerCase() !== 'basic' || !value || rest.length > 0 || !isBase64(value)) return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  const id = formDecoded(decoded.slice(0, colon));
  const secret = formDecoded(decoded.slice(colon + 1));
  return id === undefined || secret === undefined ? undefined : { id, secret };
}

/**
 * What RFC 6749 §5.2 says to answer where oidc-provider answers `invalid_request` instead, else
 * nothing. Decided from the request and the provider's state, not from the error's text:
 * - no client could be identified (no credentials at all, or Basic with an empty secret):
 *   `invalid_client`, 401 ("no client authentication included");
 * - an `Authorization` header that is no Basic credentials (another scheme, bad base64 or form
 *   encoding, no `:`): `invalid_client`, 401 ("unsupported authentication method");
 * - an authenticated client asking for a grant type it is not registered for: `unauthorized_client`.
 * A public client sending its `client_id` alone is identified, and so untouched.
 */
export function rfc6749Error(ctx: KoaContextWithOIDC, error: string): errors.OIDCProviderError | undefined {
  const { route, params, client } = ctx.oidc;
  // No params: the body was not readable (content type, encoding), a malformed request indeed.
  if (error !== 'invalid_request' || !CLIENT_AUTH_ROUTES.has(route) || !params) return undefined;
  if (!client) {
    if (params.client_secret !== undefined || params.client_assertion !== undefined) return undefined;
    const authorization = ctx.get('authorization');
    if (!authorization)
      return params.client_id === undefined ? new errors.InvalidClientAuth('no client authentication provided') : undefined;
    const credentials = basicCredentials(authorization);
    if (!credentials) {
      return new errors.InvalidClientAuth('the Authorization header is not Basic with a form-encoded client_id:client_secret');
    }
    return credentials.secret === '' ? new errors.InvalidClientAuth('no client authentication provided') : undefined;
  }
  const grantType = params.grant_type;
  if (route === 'token' && typeof grantType === 'string' && grantType !== '' && !client.grantTypeAllowed(grantType)) {
    return new errors.UnauthorizedClient('requested grant type is not allowed for this client');
  }
  return undefined;
}

/**
 * An error body as CONTRACT pins it, `{error, error_description}` and nothing else: oidc-provider adds
 * `scope` to `invalid_scope` (a refresh asking for more than was granted) and `insufficient_scope`
 * (userinfo without `openid`). RFC 6750 §3 names the missing scope in `WWW-Authenticate`, which stays.
 */
function errorOnly(error: string, description: unknown): { error: string; error_description: string } {
  return { error, error_description: typeof description === 'string' ? description : 'The request could not be completed.' };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Whether a refused userinfo request carried its credentials in another HTTP authentication scheme
 * than Bearer (`Basic`, `Digest`, `DPoP`, which is not offered) and no access token besides: a request
 * that "attempted using an unsupported authentication method" (RFC 6750 §3.1). Decided from the
 * request, as `rfc6749Error` does, not from the error's text.
 */
function otherSchemeAtUserinfo(ctx: KoaContextWithOIDC, error: unknown): boolean {
  if (ctx.oidc.route !== 'userinfo' || error !== 'invalid_request' || ctx.oidc.params?.access_token !== undefined) return false;
  const scheme = ctx.get('authorization').trim().split(' ')[0]?.toLowerCase();
  return scheme !== undefined && scheme !== '' && scheme !== 'bearer';
}

/**
 * oidc-provider post-processing (`provider.use`), where its answers at the client-authenticating
 * endpoints differ from RFC 6749:
 * - an error body of any of its routes is `{error, error_description}` alone (`errorOnly`);
 * - userinfo asked with another scheme than Bearer is 401 with a bare `Bearer` challenge (RFC 6750
 *   §3.1, RFC 9110 §11.6.1), not 400 `invalid_request`;
 * - the errors of `rfc6749Error`, and `WWW-Authenticate: Basic` on every 401 (§5.2);
 * - a token response always names its granted `scope`, "" when none (CONTRACT; the provider omits it
 *   when empty);
 * - introspecting a JWT is `{"active": false}` (RFC 7662 §2.2), not `unsupported_token_type`;
 * - `Pragma: no-cache` beside every `Cache-Control: no-store` (§5.1), and both on every error of
 *   these endpoints: the provider sets them on the token endpoint's answers only, and a refused
 *   revocation or introspection is no more for a cache to keep than a refused token request.
 */
export async function rfc6749Responses(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  await next();
  // Set only when one of the provider's routes matched.
  if (!('oidc' in ctx)) return;
  if (ctx.response.get('cache-control') === 'no-store') ctx.set('Pragma', 'no-cache');
  const { body } = ctx;
  if (!isRecord(body)) return;
  if (typeof body.error === 'string') ctx.body = errorOnly(body.error, body.error_description);
  if (otherSchemeAtUserinfo(ctx, body.error)) {
    // As when no token is sent at all: 401 and a bare Bearer challenge, no error code in it.
    ctx.status = 401;
    ctx.body = errorOnly('invalid_token', 'no access token provided: userinfo takes a Bearer token, not another scheme');
    ctx.set('WWW-Authenticate', `Bearer realm="${ctx.oidc.issuer}"`);
    return;
  }
  if (!CLIENT_AUTH_ROUTES.has(ctx.oidc.route)) return;

  if (ctx.oidc.route === 'introspection' && body.error === 'unsupported_token_type') {
    // A JWT (an id_token, the service's own access token) is no token this endpoint issued: RFC 7662
    // §2.2 answers an authorized caller `active: false` for a token that "does not exist on this server".
    ctx.status = 200;
    ctx.body = { active: false };
  } else if (typeof body.error === 'string') {
    ctx.set(OAUTH_NO_STORE);
    const replacement = rfc6749Error(ctx, body.error);
    if (replacement) {
      ctx.status = replacement.statusCode;
      ctx.body = { error: replacement.error, error_description: replacement.error_description };
    }
    // The provider challenges only clients that sent an Authorization header; a 401 always names its scheme.
    if (ctx.status === 401 && !ctx.response.get('www-authenticate')) {
      ctx.set('WWW-Authenticate', `Basic realm="${ctx.oidc.issuer}", error="invalid_client"`);
    }
  } else if (ctx.oidc.route === 'token' && typeof body.access_token === 'string' && body.scope === undefined) {
    ctx.body = { ...body, scope: '' };
  }
}
