/**
 * The protocol endpoints in the OpenAPI document (CONTRACT: the document describes them too, their
 * RFC bodies as they are). They are served by oidc-provider, not by procedures, so they are written
 * out here rather than generated.
 */
type Json = Record<string, unknown>;

export const OAUTH_ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'string',
      description: 'RFC 6749 error code (invalid_request, invalid_client, invalid_grant, RATE_LIMITED past a limit, …)',
    },
    error_description: { type: 'string', description: 'For people; do not parse' },
  },
};

const TOKEN_RESPONSE = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in'],
  properties: {
    access_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer' },
    refresh_token: { type: 'string', description: 'authorization_code with offline_access (and prompt=consent), refresh_token' },
    id_token: { type: 'string', description: 'RS256 JWT, when the scope holds openid' },
    scope: { type: 'string' },
  },
};

const TOKEN_REQUEST = {
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token', 'client_credentials'] },
    code: { type: 'string' },
    redirect_uri: { type: 'string' },
    code_verifier: { type: 'string', description: 'PKCE (S256); required for spa and native applications' },
    refresh_token: { type: 'string' },
    scope: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: { type: 'string', description: 'client_secret_post; or send it as HTTP Basic (client_secret_basic)' },
  },
};

const TOKEN_FORM = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string' }, token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] } },
};

function errors(statuses: number[]): Json {
  const descriptions: Record<number, string> = {
    400: 'RFC 6749 error',
    401: 'Client authentication failed (invalid_client) or the token is invalid',
    403: 'The access token lacks a scope the request needs (insufficient_scope, RFC 6750 §3.1)',
    429: 'Too many requests (Retry-After, RateLimit-*)',
  };
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: descriptions[status], content: { 'application/json': { schema: OAUTH_ERROR } } },
    ]),
  );
}

const formOrJson = (schema: Json) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } },
});

const clientAuth = [{ ClientSecretBasic: [] }, {}];
const tags = ['oauth'];

const query = (name: string, description: string, required = false, schema: Json = { type: 'string' }) => ({
  name,
  in: 'query',
  required,
  description,
  schema,
});

export const PROTOCOL_SECURITY_SCHEMES = {
  ClientSecretBasic: { type: 'http', scheme: 'basic', description: 'client_id and client_secret (client_secret_basic)' },
  OAuthAccessToken: { type: 'http', scheme: 'bearer', description: 'An access token issued by /oauth/token' },
};

/** The authorization request's parameters: in the query (GET) or the form body (POST). */
const AUTHORIZE_PARAMS = [
  query('response_type', 'Only code', true, { type: 'string', enum: ['code'] }),
  query('client_id', 'The application id', true),
  query('redirect_uri', 'Exactly one of the registered redirect URIs', true),
  query('scope', 'openid, email, profile, offline_access; openid when omitted'),
  query('state', 'Returned verbatim'),
  query('nonce', 'Returned verbatim in the id_token'),
  query('code_challenge', 'PKCE; required for spa and native applications'),
  query('code_challenge_method', 'Only S256', false, { type: 'string', enum: ['S256'] }),
  query('prompt', 'none, login or consent (consent with offline_access yields a refresh token)'),
  query('max_age', 'Seconds since the last sign-in after which the user signs in again', false, { type: 'integer' }),
  query('login_hint', 'Prefills the email on the sign-in page'),
];

/** An error that cannot go back to the client: RFC 6749's JSON body, or an HTML page when the caller accepts text/html (a browser). */
function unredirectableError(description: string): Json {
  return {
    description,
    content: { 'application/json': { schema: OAUTH_ERROR }, 'text/html': { schema: { type: 'string' } } },
  };
}

const AUTHORIZE_RESPONSES = {
  '303': { description: 'To the hosted sign-in, or back to redirect_uri with code, state and iss (or error and state)' },
  '400': unredirectableError('Unknown client or redirect URI mismatch (never redirected): the RFC 6749 error, an HTML page for browsers'),
};

/** The same parameters as a form body's schema. */
function authorizeForm(): Json {
  return {
    type: 'object',
    required: AUTHORIZE_PARAMS.filter((p) => p.required).map((p) => p.name),
    properties: Object.fromEntries(AUTHORIZE_PARAMS.map((p) => [p.name, { ...p.schema, description: p.description }])),
  };
}

const LOGOUT_PARAMS = [
  query('client_id', 'The application asking'),
  query('id_token_hint', 'An id_token the application holds for the user'),
  query('post_logout_redirect_uri', 'One of the application’s registered post-logout URIs'),
  query('state', 'Returned verbatim to post_logout_redirect_uri'),
  query('logout_hint', 'Which user to sign out'),
  query('ui_locales', 'Preferred languages of the page'),
];

const LOGOUT_RESPONSES = {
  '200': {
    description: 'HTML: the confirmation form (it posts to /oauth/logout/confirm), or the signed-out page',
    content: { 'text/html': { schema: { type: 'string' } } },
  },
  '303': { description: 'Back to post_logout_redirect_uri (with state) once signed out' },
  '400': unredirectableError('An unknown client or post_logout_redirect_uri: the RFC 6749 error, an HTML page for browsers'),
};

/** UserInfo, answered the same to a GET and a POST. */
function userinfo(operationId: string, summary: string): Json {
  return {
    operationId,
    summary,
    tags,
    security: [{ OAuthAccessToken: [] }],
    responses: {
      '200': {
        description: 'Claims',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['sub'],
              properties: {
                sub: { type: 'string' },
                email: { type: 'string' },
                email_verified: { type: 'boolean' },
                name: { type: 'string' },
                updated_at: { type: 'integer' },
              },
            },
          },
        },
      },
      // 400: a malformed request (Bearer with no token, a token sent two ways or in the query);
      // 401: no token, another scheme, or a token not valid; 403: a token without `openid`.
      ...errors([400, 401, 403]),
    },
  };
}

export function protocolPaths(): Record<string, Json> {
  return {
    '/oauth/authorize': {
      get: {
        operationId: 'oauth-authorize',
        summary: 'OAuth 2.0 authorization (preview): code flow with PKCE; signs the user in on a hosted page',
        tags,
        parameters: AUTHORIZE_PARAMS,
        responses: AUTHORIZE_RESPONSES,
      },
      post: {
        operationId: 'oauth-authorize-post',
        summary: 'The same authorization request as a form post (OpenID Connect Core 3.1.2.1)',
        tags,
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: authorizeForm() } } },
        responses: AUTHORIZE_RESPONSES,
      },
    },
    '/oauth/token': {
      post: {
        operationId: 'oauth-token',
        summary: 'OAuth 2.0 token endpoint (authorization_code, refresh_token with rotation, client_credentials); 60 per minute per IP',
        tags,
        security: clientAuth,
        requestBody: formOrJson(TOKEN_REQUEST),
        responses: {
          '200': { description: 'Tokens (Cache-Control: no-store)', content: { 'application/json': { schema: TOKEN_RESPONSE } } },
          ...errors([400, 401, 429]),
        },
      },
    },
    '/oauth/userinfo': {
      get: userinfo('oauth-userinfo', 'OpenID Connect UserInfo: the claims the access token’s scopes release'),
      post: {
        ...userinfo('oauth-userinfo-post', 'The same UserInfo request as a POST (OpenID Connect Core 5.3.1)'),
        requestBody: {
          required: false,
          content: {
            'application/x-www-form-urlencoded': {
              schema: { type: 'object', properties: { access_token: { type: 'string', description: 'Or send it as a Bearer token' } } },
            },
          },
        },
      },
    },
    '/oauth/logout': {
      get: {
        operationId: 'oauth-logout',
        summary: 'OpenID Connect RP-initiated logout: asks the browser to confirm, then ends its hosted sign-in session',
        tags,
        parameters: LOGOUT_PARAMS,
        responses: LOGOUT_RESPONSES,
      },
      post: {
        operationId: 'oauth-logout-post',
        summary: 'The same logout request as a form post (its confirmation is posted here too)',
        tags,
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                properties: Object.fromEntries(LOGOUT_PARAMS.map((p) => [p.name, { ...p.schema, description: p.description }])),
              },
            },
          },
        },
        responses: LOGOUT_RESPONSES,
      },
    },
    '/oauth/revoke': {
      post: {
        operationId: 'oauth-revoke',
        summary: 'RFC 7009 token revocation (a client revokes its own tokens)',
        tags,
        security: clientAuth,
        requestBody: formOrJson(TOKEN_FORM),
        responses: { '200': { description: 'Revoked, or nothing to revoke' }, ...errors([400, 401]) },
      },
    },
    '/oauth/introspect': {
      post: {
        operationId: 'oauth-introspect',
        summary: 'RFC 7662 token introspection (clients of the token’s workspace)',
        tags,
        security: clientAuth,
        requestBody: formOrJson(TOKEN_FORM),
        responses: {
          '200': {
            description: 'active, and for an active token its client_id, sub, scope, exp, iat, iss, token_type',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['active'], properties: { active: { type: 'boolean' } }, additionalProperties: true },
              },
            },
          },
          ...errors([400, 401]),
        },
      },
    },
    '/.well-known/openid-configuration': {
      get: {
        operationId: 'oidc-discovery',
        summary: 'OpenID Connect discovery (issuer = BASE_URL)',
        tags,
        responses: {
          '200': {
            description: 'The provider metadata (Cache-Control: public, max-age=300)',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
        },
      },
    },
    '/.well-known/jwks.json': {
      get: {
        operationId: 'jwks',
        summary: 'Public signing keys: EdDSA for access tokens, RS256 for id_tokens',
        tags,
        responses: {
          '200': {
            description: 'A JWK Set (RFC 7517)',
            content: {
              'application/json': {
                schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'object' } } } },
              },
            },
          },
        },
      },
    },
  };
}
