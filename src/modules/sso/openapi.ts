/**
 * The browser sign-in routes in the OpenAPI document (CONTRACT: it describes every method and path,
 * the callbacks among them). They are Express routes (sign-in.routes.ts) that redirect, not
 * procedures, so they are written out here: every route under /api/v1/auth/oauth/ and /api/v1/auth/sso/.
 */
type Json = Record<string, unknown>;

const tags = ['sign-in'];

const param = (name: string, where: 'query' | 'path', description: string, required = false): Json => ({
  name,
  in: where,
  required: where === 'path' || required,
  description,
  schema: { type: 'string' },
});

/** These routes answer their refusals in the envelope, like every other /api/v1 call. */
const error = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const BAD_REQUEST = error('BAD_REQUEST: no workspace named, a redirect_uri that is not allowed, a malformed state or code_challenge');
const INVALID_TOKEN = error('INVALID_TOKEN: no workspace_id or X-Tenant-ID, and the credential sent to name the workspace is not valid');
const NOT_FOUND = error('NOT_FOUND: no such workspace, or the provider or organization does not sign in there');

const PROVIDER_MISCONFIGURED = error(
  'INTERNAL: the OpenID provider’s discovery document is wrong (missing, not JSON, without an authorization endpoint, token endpoint or jwks_uri, another issuer); the message names the issuer and the problem; no Retry-After, retrying will not help',
);
const PROVIDER_DOWN = error(
  'UNAVAILABLE: the identity provider cannot be reached, answers 5xx or 429, or does not answer in time; Retry-After',
);

const STATE_UNKNOWN = error('INVALID_TOKEN: the state names no sign-in in flight (unknown, expired or already completed)');
const RESULT_REDIRECT =
  'To redirect_uri with code, or with error (access_denied: refused, or an answer that does not verify; temporarily_unavailable when the identity provider or one of its endpoints is down: unreachable, 5xx, 429, no answer in time; server_error when it is misconfigured: its discovery document is wrong, or its token, userinfo or JWKS endpoint answers what no provider answers (a 4xx that is no OAuth error, a redirect, HTML, not JSON, no access_token or id_token) or refuses the workspace’s client (invalid_client; at the authorization endpoint unauthorized_client, invalid_scope, unsupported_response_type), the description naming the problem) and error_description; then the app’s state, if it sent one';
const organizationParam = param('organizationId', 'path', 'The organization (org_…)');

const workspace = param('workspace_id', 'query', 'The workspace (or send X-Tenant-ID, or a credential of the workspace)');
const redirectUri = param('redirect_uri', 'query', 'Where the result goes: one of the workspace’s applications’ redirect URIs');
const appState: Json = {
  ...param('state', 'query', 'The app’s own opaque value, handed back on redirect_uri with the code or the error (login CSRF protection)'),
  schema: { type: 'string', maxLength: 512, pattern: '^[\\x20-\\x7e]+$' },
};

const codeChallenge: Json = {
  ...param('code_challenge', 'query', 'PKCE (RFC 7636): the base64url SHA-256 of a code_verifier the exchange must then send'),
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$' },
};
const codeChallengeMethod: Json = {
  ...param('code_challenge_method', 'query', 'S256 (the only method; also the default)'),
  schema: { type: 'string', enum: ['S256'] },
};

export function browserSignInPaths(): Record<string, Json> {
  return {
    '/api/v1/auth/oauth/{provider}/start': {
      get: {
        operationId: 'social-sign-in-start',
        summary: 'Start a social (or generic OIDC) sign-in: redirects the browser to the provider; 30 per minute per IP',
        tags,
        parameters: [
          param('provider', 'path', 'google, microsoft, github or oidc (a generic OpenID Connect provider)'),
          workspace,
          redirectUri,
          appState,
          codeChallenge,
          codeChallengeMethod,
        ],
        responses: {
          '302': { description: 'To the provider’s authorization page' },
          '303': {
            description:
              'Only for a browser navigation (Sec-Fetch-Mode: navigate, or an Accept preferring text/html) without redirect_uri that fails before leaving: to BASE_URL/login/callback with error and error_description (and the state, when it is a valid one), in place of the error answer',
          },
          '400': BAD_REQUEST,
          '401': INVALID_TOKEN,
          '404': NOT_FOUND,
          '500': PROVIDER_MISCONFIGURED,
          '503': PROVIDER_DOWN,
        },
      },
    },
    '/api/v1/auth/oauth/{provider}/callback': {
      get: {
        operationId: 'social-sign-in-callback',
        summary: 'Where the provider sends the browser back; redirects to redirect_uri with a one-time code (or an error)',
        tags,
        parameters: [
          param('provider', 'path', 'The provider the sign-in started with'),
          param('state', 'query', 'From the start', true),
          param('code', 'query', 'From the provider'),
          param('error', 'query', 'From the provider instead of a code (access_denied when the user cancelled)'),
        ],
        responses: {
          '303': { description: RESULT_REDIRECT },
          '400': error('BAD_REQUEST: no state, or a callback from another provider than the sign-in started with'),
          '401': STATE_UNKNOWN,
          '404': error('NOT_FOUND: no such provider'),
        },
      },
    },
    '/api/v1/auth/sso/oidc/callback': {
      get: {
        operationId: 'sso-oidc-callback',
        summary: 'Where an organization’s OpenID Connect identity provider sends the browser back; redirects to redirect_uri',
        tags,
        parameters: [
          param('state', 'query', 'From the start', true),
          param('code', 'query', 'From the identity provider'),
          param('error', 'query', 'From the identity provider instead of a code (access_denied when the user cancelled)'),
        ],
        responses: {
          '303': { description: RESULT_REDIRECT },
          '400': error('BAD_REQUEST: no state'),
          '401': STATE_UNKNOWN,
        },
      },
    },
    '/api/v1/auth/sso/saml/{organizationId}/metadata': {
      get: {
        operationId: 'sso-saml-metadata',
        summary: 'The service provider’s SAML metadata for an organization (entity id, assertion consumer service), for its IdP',
        tags,
        parameters: [organizationParam],
        responses: {
          '200': {
            description: 'SAML 2.0 metadata (EntityDescriptor with an SPSSODescriptor)',
            content: { 'application/samlmetadata+xml': { schema: { type: 'string' } } },
          },
          '404': error('NOT_FOUND: not an organization id'),
        },
      },
    },
    '/api/v1/auth/sso/saml/{organizationId}/acs': {
      post: {
        operationId: 'sso-saml-acs',
        summary:
          'The SAML assertion consumer service: the IdP’s HTTP-POST response to an AuthnRequest; redirects to redirect_uri (IdP-initiated sign-in is not supported)',
        tags,
        parameters: [organizationParam],
        requestBody: {
          required: true,
          content: {
            'application/x-www-form-urlencoded': {
              schema: {
                type: 'object',
                required: ['SAMLResponse', 'RelayState'],
                properties: {
                  SAMLResponse: { type: 'string', description: 'The base64 SAML Response, signed by the IdP' },
                  RelayState: { type: 'string', description: 'The state the AuthnRequest carried' },
                },
              },
            },
          },
        },
        responses: {
          '303': { description: RESULT_REDIRECT },
          '400': error('BAD_REQUEST: no SAMLResponse or RelayState'),
          '401': STATE_UNKNOWN,
          '404': error('NOT_FOUND: not an organization id'),
        },
      },
    },
    '/api/v1/auth/sso/start': {
      get: {
        operationId: 'sso-sign-in-start',
        summary: 'Start an organization’s SSO sign-in (by the user’s email domain or organization_id): redirects to its identity provider',
        tags,
        parameters: [
          workspace,
          param('email', 'query', 'The user’s email; its domain picks the organization'),
          param('organization_id', 'query', 'Or the organization'),
          redirectUri,
          appState,
          codeChallenge,
          codeChallengeMethod,
        ],
        responses: {
          '302': { description: 'To the organization’s identity provider' },
          '303': {
            description:
              'Only for a browser navigation (Sec-Fetch-Mode: navigate, or an Accept preferring text/html) without redirect_uri that fails before leaving: to BASE_URL/login/callback with error and error_description (and the state, when it is a valid one), in place of the error answer',
          },
          '400': BAD_REQUEST,
          '401': INVALID_TOKEN,
          '404': NOT_FOUND,
          '500': PROVIDER_MISCONFIGURED,
          '503': PROVIDER_DOWN,
        },
      },
    },
  };
}
