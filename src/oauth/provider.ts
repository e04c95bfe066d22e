import type { MikroORM } from '@mikro-orm/postgresql';
import Provider, {
  errors,
  interactionPolicy,
  type Client,
  type ClientAuthMethod,
  type Configuration,
  type ErrorOut,
  type Grant,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { Config } from '../config.ts';
import { recordAudit } from '../core/audit.ts';
import type { CryptoBox } from '../core/crypto-box.ts';
import type { Logger } from '../core/logger.ts';
import { constantTimeEqual, sha256 } from '../core/secrets.ts';
import type { SigningKeys } from '../modules/auth/signing-keys.ts';
import { ID_TOKEN_ALG } from '../modules/auth/signing-keys.ts';
import { accountFinder, CLAIMS } from './account.ts';
import { idTokenKeySlots } from './id-token-keys.ts';
import { PostgresAdapter } from './adapter.ts';
import { WORKSPACE_METADATA, workspaceOf } from './clients.ts';
import { logoutPage, messagePage } from './pages.ts';
import { rfc6749Error, rfc6749Responses } from './rfc6749.ts';

/** The protocol endpoints, at the spec's exact paths. The JWKS is the service's one `/.well-known/jwks.json`. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  userinfo: '/oauth/userinfo',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  end_session: '/oauth/logout',
  jwks: '/.well-known/jwks.json',
} as const;

export const INTERACTION_PATH = '/oauth/interaction';

/** How clients authenticate at the token, revocation and introspection endpoints (no HS* key: secrets are digests). */
const CLIENT_AUTH_METHODS: ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

const SESSION_TTL = 14 * 24 * 60 * 60;
const INTERACTION_TTL = 60 * 60;
const CODE_TTL = 60;

export interface OAuthServer {
  provider: Provider;
}

export interface OAuthServerDeps {
  config: Config;
  orm: MikroORM;
  log: Logger;
  keys: SigningKeys;
  box: CryptoBox;
}

/**
 * Every application is a first-party client of its workspace, so the user is never asked to consent:
 * the grant (one per user and client) simply gains whatever scopes the client asks for.
 */
async function firstPartyGrant(ctx: KoaContextWithOIDC): Promise<Grant | undefined> {
  const { client, session, provider } = ctx.oidc;
  const accountId = session?.accountId;
  if (!client || !accountId) return undefined;
  const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
  const existing = grantId ? await provider.Grant.find(grantId) : undefined;
  const grant = existing?.accountId === accountId ? existing : new provider.Grant({ clientId: client.clientId, accountId });
  const encountered = new Set(grant.getOIDCScopeEncountered().split(' '));
  const missingScopes = [...ctx.oidc.requestParamOIDCScopes].filter((scope) => !encountered.has(scope));
  const knownClaims = new Set(grant.getOIDCClaimsEncountered());
  const missingClaims = [...ctx.oidc.requestParamClaims].filter((claim) => !knownClaims.has(claim));
  if (grant !== existing || missingScopes.length > 0 || missingClaims.length > 0) {
    grant.addOIDCScope(missingScopes);
    grant.addOIDCClaims(missingClaims);
    await grant.save();
  }
  return grant;
}

/**
 * The default policy, less the consent native apps would otherwise always need (first-party, above),
 * plus: a browser session whose account cannot use this client (another workspace, deactivated,
 * locked by an admin) signs in again.
 */
function policy() {
  const base = interactionPolicy.base();
  base.get('consent')?.checks.remove('native_client_prompt');
  base
    .get('login')
    ?.checks.add(
      new interactionPolicy.Check('account_unusable', 'the signed-in account cannot use this application', 'login_required', (ctx) =>
        Boolean(ctx.oidc.session?.accountId && !ctx.oidc.account),
      ),
    );
  return base;
}

/** Every scope this server grants; any other value of a request's `scope` is ignored. */
const SCOPES = ['openid', 'offline_access', 'email', 'profile'];

/**
 * RFC 6749 §4.1.2.1: an authorization request none of whose scope values can be granted (only unknown
 * values, or `offline_access` alone, which oidc-provider drops without `prompt=consent`) is
 * `invalid_scope`, back at the client, before anyone signs in. oidc-provider showed the sign-in page
 * and then answered `access_denied`, with no scope left to grant. Unknown values beside a known one
 * are still ignored (OpenID Connect Core 3.1.2.1). It is the validator of `scope` in `extraParams`,
 * the provider's hook that runs once the redirect URI is checked, so the error can go back.
 */
function grantableScopeRequired(_ctx: KoaContextWithOIDC, value: string | undefined): void {
  if (value === undefined) {
    throw invalidScope('offline_access is granted only with prompt=consent, and nothing else was requested');
  }
  if (!value.split(' ').some((scope) => SCOPES.includes(scope))) {
    throw invalidScope(`none of the requested scope values is known here (${SCOPES.join(', ')})`);
  }
}

/**
 * `invalid_scope` with RFC 6749 §4.1.2.1's parameters only. oidc-provider's `InvalidScope` also sends
 * the scope it refused back as a `scope` parameter (empty once it has dropped the unknown values).
 */
function invalidScope(description: string): errors.OIDCProviderError {
  return new errors.CustomOIDCProviderError('invalid_scope', description);
}

/** The scope of an authorization request that names none (RFC 6749 §3.3): what every application here is for. */
export const DEFAULT_SCOPE = 'openid';

/**
 * RFC 6749 §3.3: an authorization request without `scope` is served with a default, `openid`,
 * instead of failing after the user signed in: oidc-provider granted nothing and answered
 * `access_denied` once the sign-in was done. A POSTed request gets it in its body (oauth/routes.ts).
 */
async function defaultScope(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  if (ctx.method === 'GET' && ctx.path === OAUTH_ROUTES.authorization && !ctx.query.scope) {
    ctx.query = { ...ctx.query, scope: DEFAULT_SCOPE };
  }
  await next();
}

/**
 * oidc-provider lists `sid` in `claims_supported` whatever `claims` says (its defaults cannot be
 * unset), though it puts `sid` only in the id_tokens of clients registered for front- or back-channel
 * logout, which this server does not offer. No token carries it, so discovery does not list it.
 */
async function issuedClaimsOnly(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  await next();
  if (!('oidc' in ctx) || ctx.oidc.route !== 'discovery') return;
  const body: unknown = ctx.body;
  if (typeof body !== 'object' || body === null || !('claims_supported' in body) || !Array.isArray(body.claims_supported)) return;
  ctx.body = { ...body, claims_supported: body.claims_supported.filter((claim: unknown) => claim !== 'sid') };
}

/** How long a cache may keep the discovery documents: they change only with the configuration (a restart). */
export const DISCOVERY_CACHE_CONTROL = 'public, max-age=300';

/**
 * The discovery documents (`/.well-known/openid-configuration` and RFC 8414's
 * `/.well-known/oauth-authorization-server`) hold no credential and nothing per user: clients and
 * proxies may keep them five minutes (oidc-provider sends no Cache-Control for them). An error is not kept.
 */
async function cacheableDiscovery(ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<void> {
  await next();
  if ('oidc' in ctx && ctx.oidc.route === 'discovery' && ctx.status === 200) ctx.set('Cache-Control', DISCOVERY_CACHE_CONTROL);
}

/**
 * Errors that cannot go back to the client (no valid redirect_uri, unknown client): browsers, which
 * ask for `text/html`, get our own page (no third-party fonts or scripts); other callers (`fetch`, curl,
 * a client library) get `{error, error_description}`.
 */
function renderError(ctx: KoaContextWithOIDC, out: ErrorOut): void {
  const description = out.error_description ?? 'The request could not be completed.';
  if (!ctx.get('accept').includes('text/html')) {
    ctx.body = { error: out.error, error_description: description };
    return;
  }
  ctx.type = 'html';
  ctx.body = messagePage('Something went wrong', `${description} (${out.error})`);
}

/** SPAs call the token endpoint from the browser: allow the origins of the client's redirect URIs. */
function clientBasedCORS(ctx: KoaContextWithOIDC, origin: string, client: Client): boolean {
  if (origin === 'null') return false;
  return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
}

/** Where a provider event came from, for its audit row. */
function originOfContext(ctx: KoaContextWithOIDC) {
  const requestId = ctx.response.get('x-request-id');
  return { ip: ctx.ip || null, userAgent: ctx.get('user-agent').slice(0, 512) || null, requestId: requestId || null };
}

function param(ctx: KoaContextWithOIDC, name: string): string | undefined {
  const value = ctx.oidc.params?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The authorization server: oidc-provider over our storage, keys and accounts. Made once per process
 * (deps.ts); app.ts mounts its routes.
 */
export async function createOAuthServer(deps: OAuthServerDeps): Promise<OAuthServer> {
  const { config, orm, log } = deps;
  const findAccount = accountFinder(orm);
  const configuration: Configuration = {
    adapter: (name: string) => new PostgresAdapter(orm, deps.keys, name),
    findAccount,
    // Read from the reloaded key set on every use, so a rotation needs no restart (oauth/id-token-keys.ts).
    jwks: { keys: idTokenKeySlots(deps.keys) },
    claims: CLAIMS,
    // The claims a scope releases go into the id_token too, not only to userinfo, as Auth0 and Logto
    // do: relying parties read `email` and `name` from the id_token (OpenID Connect Core 5.4 lets an
    // OP return them at userinfo only when it issues an access token; clients expect both here).
    conformIdTokenClaims: false,
    scopes: SCOPES,
    extraParams: { scope: grantableScopeRequired },
    responseTypes: ['code'],
    clientAuthMethods: CLIENT_AUTH_METHODS,
    // RFC 8414 §2: left out, these two would say `client_secret_basic` alone, yet both endpoints take
    // what the token endpoint takes (a public client revokes and introspects its own tokens with `none`).
    discovery: {
      revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    },
    enabledJWA: { idTokenSigningAlgValues: [ID_TOKEN_ALG], userinfoSigningAlgValues: [ID_TOKEN_ALG] },
    extraClientMetadata: { properties: [WORKSPACE_METADATA] },
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    loadExistingGrant: firstPartyGrant,
    clientBasedCORS,
    renderError,
    routes: OAUTH_ROUTES,
    interactions: { policy: policy(), url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}` },
    // OpenID Connect Core 3.1.2.1 and RP-Initiated Logout 2: the authorization and end-session
    // endpoints take POST as well as GET. oidc-provider then needs the browser-session cookie to be
    // SameSite=None, or a form posted from the application's site would arrive without it.
    enableHttpPostMethods: true,
    cookies: {
      // Signed with the current master key's derived key; verified with the previous ones too (rotation).
      keys: deps.box.deriveKeys('oidc-provider cookies'),
      // The browser session (long): sent with a cross-site POST. The interaction cookies (short) stay
      // Lax, so the hosted forms still refuse another site's posts (oauth/interactions.ts).
      long: { httpOnly: true, sameSite: 'none' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    ttl: {
      AccessToken: config.ACCESS_TOKEN_TTL,
      ClientCredentials: config.ACCESS_TOKEN_TTL,
      IdToken: config.ACCESS_TOKEN_TTL,
      RefreshToken: config.REFRESH_TOKEN_TTL,
      Grant: config.REFRESH_TOKEN_TTL,
      AuthorizationCode: CODE_TTL,
      Session: SESSION_TTL,
      Interaction: INTERACTION_TTL,
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // Any client of the token's workspace may introspect it (a backend checking its SPA's tokens);
        // a public client only its own tokens. A user's token is active only while its user is an
        // account (findAccount: not deactivated, not locked by an admin, not deleted), as userinfo and
        // refresh decide (RFC 7662: active means usable). Only introspection pays for that lookup.
        allowedPolicy: async (ctx, client, token) => {
          if (token.clientId !== client.clientId) {
            if (client.clientAuthMethod === 'none' || !token.clientId) return false;
            const owner = workspaceOf(await ctx.oidc.provider.Client.find(token.clientId));
            if (owner === undefined || owner !== workspaceOf(client)) return false;
          }
          // Client credentials tokens have no user.
          const accountId = 'accountId' in token ? token.accountId : undefined;
          return !accountId || (await findAccount(ctx, accountId)) !== undefined;
        },
      },
      // A client revokes its own tokens; another's are left alone (still 200, RFC 7009 2.2).
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      userinfo: { enabled: true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: (ctx, form) => {
          ctx.type = 'html';
          ctx.body = logoutPage(form, ctx.oidc.client?.clientName);
        },
        postLogoutSuccessSource: (ctx) => {
          ctx.type = 'html';
          ctx.body = messagePage('Signed out', 'You are signed out. You can close this page.');
        },
      },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: { enabled: false },
      dPoP: { enabled: false },
      externalSigningSupport: { enabled: true, ack: 'experimental-01' },
    },
  };

  const provider = new Provider(config.BASE_URL, configuration);
  // Express has already applied TRUST_PROXY; oauth/routes.ts hands its verdict on in X-Forwarded-*.
  provider.proxy = config.trustProxy !== false;
  provider.use(defaultScope);
  provider.use(issuedClaimsOnly);
  provider.use(cacheableDiscovery);
  provider.use(rfc6749Responses);

  // Secrets are stored as SHA-256 digests (docs/decisions.md): hash what the client presents, then compare.
  provider.Client.prototype.compareClientSecret = function compareHashedSecret(this: Client, presented: string): boolean {
    return typeof this.clientSecret === 'string' && constantTimeEqual(sha256(presented), this.clientSecret);
  };

  // A client_credentials token speaks for an application, not a user, and every scope this server
  // knows is a user's (OpenID Connect's openid, profile, email, offline_access): none is granted to
  // it, so the response says `scope: ""` and introspection names none, whatever the client asked for
  // (oidc-provider keeps and echoes them; Auth0 and Logto grant an application only API scopes).
  const saveClientCredentials = provider.ClientCredentials.prototype.save;
  provider.ClientCredentials.prototype.save = function withoutUserScopes(this: InstanceType<Provider['ClientCredentials']>) {
    this.scope = undefined;
    return saveClientCredentials.call(this);
  };

  const audit = (ctx: KoaContextWithOIDC, eventType: string, details: Record<string, unknown>) => {
    const client = ctx.oidc.client;
    const workspaceId = workspaceOf(client);
    if (!workspaceId || !client) return;
    const em = orm.em.fork();
    recordAudit(
      { em, workspaceId, actor: { type: 'system', id: null }, ...originOfContext(ctx) },
      { eventType, outcome: 'failure', target: { type: 'application', id: client.clientId }, details },
    );
    em.flush().catch((error: unknown) => log.error('audit write failed', { eventType, error }));
  };

  provider.on('grant.error', (ctx, raised) => {
    // Audited as answered (rfc6749Responses rewrites a few of the provider's errors).
    const error = rfc6749Error(ctx, raised.error) ?? raised;
    audit(ctx, 'oauth.token', {
      error: error.error,
      error_description: error.error_description,
      reason: error.error_detail,
      grant_type: param(ctx, 'grant_type'),
    });
  });
  provider.on('grant.revoked', (ctx, grantId) => {
    if (ctx.oidc.route === 'token') audit(ctx, 'oauth.grant_revoke', { grant_id: grantId, reason: 'replayed code or refresh token' });
  });
  provider.on('server_error', (ctx, error) => {
    log.error('authorization server error', { path: ctx.path, requestId: ctx.response.get('x-request-id'), error });
  });

  return { provider };
}
