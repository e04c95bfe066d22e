import { AsyncLocalStorage } from 'node:async_hooks';
import * as client from 'openid-client';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { sha256 } from '../../core/secrets.ts';
import { canonicalEmail } from '../../core/addresses.ts';
import { outboundFetch, outboundTargetProblem, privateTargetIn } from '../../core/outbound.ts';

/** An OpenID provider (or a plain OAuth 2.0 one, like GitHub) this service signs users in through. */
export interface ProviderEndpoint {
  clientId: string;
  clientSecret: string;
  /** Discovery is read from here (OpenID providers). */
  issuer?: string;
  /** Or, for a provider whose endpoints are known (Google, Microsoft), no discovery at all. */
  metadata?: client.ServerMetadata;
  /** Plain OAuth 2.0 providers name their endpoints instead. */
  endpoints?: { authorization: string; token: string };
}

/**
 * http:// identity providers are for tests and local development only; so are providers at loopback
 * and private addresses (`ALLOW_PRIVATE_IDP_TARGETS`).
 */
export function rpOptions(deps: AppDeps): RpOptions {
  return { allowInsecure: deps.config.NODE_ENV !== 'production', allowPrivate: deps.config.ALLOW_PRIVATE_IDP_TARGETS };
}

export interface RpOptions {
  /** http:// issuers (tests and local development only). */
  allowInsecure: boolean;
  /** Providers (and the endpoints their discovery names) at loopback and private addresses. */
  allowPrivate: boolean;
}

/** The URLs the calls of one `askEndpoints` asked, in order: the last is the endpoint whose answer went wrong. */
const asked = new AsyncLocalStorage<string[]>();

/** The fetch every call to a provider makes: customer-named servers, so public addresses only unless allowed. */
function fetchFor(options: RpOptions): client.CustomFetch {
  const fetch = outboundFetch({ allowPrivate: options.allowPrivate });
  return (url, init) => {
    asked.getStore()?.push(url);
    return fetch(url, init);
  };
}

const DISCOVERY_TTL_MS = 10 * 60 * 1000;
const discovered = new Map<string, { config: client.Configuration; until: number }>();

/**
 * The provider's configuration: discovery is fetched and validated by openid-client (the issuer in
 * the document must equal the one configured), then kept ten minutes per issuer and client.
 */
export async function providerConfiguration(endpoint: ProviderEndpoint, options: RpOptions): Promise<client.Configuration> {
  const key = [
    endpoint.issuer ?? endpoint.endpoints?.authorization,
    endpoint.clientId,
    sha256(endpoint.clientSecret),
    options.allowInsecure,
    options.allowPrivate,
  ].join('|');
  const hit = discovered.get(key);
  if (hit && hit.until > Date.now()) return hit.config;
  let config: client.Configuration;
  if (endpoint.metadata) {
    config = new client.Configuration(endpoint.metadata, endpoint.clientId, endpoint.clientSecret);
    config[client.customFetch] = fetchFor(options);
  } else if (endpoint.issuer) {
    config = await discover(new URL(endpoint.issuer), endpoint.clientId, endpoint.clientSecret, options);
  } else if (endpoint.endpoints) {
    config = new client.Configuration(
      {
        issuer: new URL(endpoint.endpoints.authorization).origin,
        authorization_endpoint: endpoint.endpoints.authorization,
        token_endpoint: endpoint.endpoints.token,
      },
      endpoint.clientId,
      { client_secret: endpoint.clientSecret },
      client.ClientSecretPost(endpoint.clientSecret),
    );
    config[client.customFetch] = fetchFor(options);
    if (options.allowInsecure) client.allowInsecureRequests(config);
  } else {
    throw new AppError('BAD_REQUEST', 'The provider has neither an issuer nor endpoints');
  }
  // An id_token's signature is checked against the provider's published keys (jwks_uri), not only its
  // claims: openid-client leaves that to TLS unless asked (OpenID Connect Core 3.1.3.7, item 6).
  client.enableNonRepudiationChecks(config);
  discovered.set(key, { config, until: Date.now() + DISCOVERY_TTL_MS });
  return config;
}

/** Forgets a provider's configuration, so the next sign-in reads its discovery again (after its admin mends it). */
function forget(config: client.Configuration): void {
  for (const [key, hit] of discovered) if (hit.config === config) discovered.delete(key);
}

/**
 * The identity provider is down: it could not be reached, answered 5xx or 429, or did not answer in time. A
 * 503 to retry where the caller waits for an answer (a start); on a callback the app hears RFC 6749's
 * `temporarily_unavailable` (§4.1.2.1), not a refusal.
 */
export class ProviderUnavailable extends AppError {
  constructor(origin: string, cause: unknown) {
    super('UNAVAILABLE', `The identity provider at ${origin} could not be reached; try again later`, {
      headers: { 'Retry-After': '30' },
      cause,
    });
  }
}

/** Socket and name-resolution failures (Node's and undici's codes): no answer came. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'OAUTH_TIMEOUT',
  'OAUTH_ABORT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/**
 * Whether an error of a call to a provider, or one of its causes, says the provider is down rather
 * than that it refused: a network failure, a timeout, a 5xx answer, or a 429 (too many requests: it
 * passes) (openid-client keeps the status of an OAuth error body, and the Response itself for an
 * answer it could not read).
 */
export function isProviderDown(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof Response) return current.status >= 500 || current.status === 429;
    const { code, name, message, status } = current as { code?: unknown; name?: unknown; message?: unknown; status?: unknown };
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (name === 'TimeoutError' || name === 'AbortError') return true;
    if (current instanceof TypeError && message === 'fetch failed') return true;
    if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Runs a call to the provider at `origin`; its being down becomes `ProviderUnavailable`, anything else stays as it is. */
export async function askProvider<T>(origin: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const refused = privateTargetIn(error);
    if (refused) throw refused;
    if (error instanceof AppError || !isProviderDown(error)) throw error;
    throw new ProviderUnavailable(origin, error);
  }
}

/** What a misconfigured provider's admin is told to mend, by default: the issuer or the provider. */
const ISSUER_REMEDY = "Correct the issuer in the sign-in settings or the provider's configuration";
/** For an endpoint that answers wrongly: the provider's configuration, or the settings that lead to it. */
const ENDPOINT_REMEDY = "Correct the provider's configuration or the sign-in settings";
/** For a token endpoint that refuses the client itself: the client id and secret the workspace saved. */
const CLIENT_REMEDY = "Correct the client ID and secret in the sign-in settings, or the client's registration at the provider";

/**
 * The identity provider's configuration is wrong, so waiting will not help: its discovery document is
 * missing (a 4xx), not a JSON object, lacks the authorization or token endpoint or the jwks_uri, or names another issuer
 * than the one configured (often the issuer typed into the provider's settings is not quite the
 * provider's); or, at the callback, an endpoint it names answers what no provider answers (a 4xx that
 * is no OAuth error, an HTML page, a body that is not JSON, a 200 without the token) or refuses the
 * workspace's client (`invalid_client`). A 500 that names the issuer and the problem, without
 * `Retry-After`; on a callback the app hears RFC 6749's `server_error` with that description.
 */
export class ProviderMisconfigured extends AppError {
  constructor(issuer: string, problem: string, cause?: unknown, remedy = ISSUER_REMEDY) {
    super('INTERNAL', `The identity provider with issuer ${issuer} is misconfigured: ${problem}. ${remedy}; retrying will not help`, {
      cause,
    });
  }
}

/** A URL as a message may show it: without the credentials it may carry. */
export function withoutCredentials(raw: string): string {
  const url = new URL(raw);
  url.username = '';
  url.password = '';
  return url.pathname === '/' && !url.search ? url.origin : url.href;
}

/**
 * OAuth errors of a token endpoint (RFC 6749 §5.2) that say the workspace's client is wrong, not the
 * person's code: a wrong secret or client id, a client not allowed the code grant; GitHub says
 * `incorrect_client_credentials`. `invalid_grant` (a code expired, used or not this client's) and the
 * others stay refusals of this one sign-in.
 */
const CLIENT_ERRORS = new Set(['invalid_client', 'unauthorized_client', 'unsupported_grant_type', 'incorrect_client_credentials']);

/** The OAuth error code of an answer, if it was one: a 4xx error body, or a 200 carrying `error` (GitHub's way). */
function oauthErrorOf(error: unknown): string | undefined {
  if (error instanceof client.ResponseBodyError) return error.error;
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    const body = (current as { body?: unknown }).body;
    if (typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string') {
      return (body as { error: string }).error;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The OAuth error code with which the provider's token endpoint refused the sign-in's code itself
 * (`invalid_grant`: expired, used, not this client's), when that is what `error` is; the code only when
 * it is short printable ASCII (it reaches the app's description).
 */
export function codeRefusalOf(error: unknown): string | undefined {
  const code = oauthErrorOf(error);
  if (code === undefined || CLIENT_ERRORS.has(code)) return undefined;
  return /^[\x20-\x7e]{1,64}$/.test(code) ? code : 'refused';
}

/** The answers of the chain of an error: the Response it could not use, the codes and messages on the way. */
function answerChain(error: unknown): { response?: Response; codes: unknown[]; messages: string[]; alg?: string } {
  const found: { response?: Response; codes: unknown[]; messages: string[]; alg?: string } = { codes: [], messages: [] };
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof Response) {
      found.response = current;
      break;
    }
    const { code, alg } = current as { code?: unknown; alg?: unknown };
    found.codes.push(code);
    if (current instanceof Error) found.messages.push(current.message);
    // oauth4webapi's "unsupported JWS algorithm" keeps the id_token's `alg` as its cause.
    if (typeof alg === 'string') found.alg = alg;
    current = (current as { cause?: unknown }).cause;
  }
  return found;
}

/**
 * What an endpoint's answer (`where`, the endpoint named for a message) got wrong that waiting will not
 * mend, or null when the answer is a refusal (an OAuth error of the person's sign-in, a challenge) or
 * did not verify (a token's signature or claims): those stay as they are.
 */
function answerProblem(error: unknown, where: string, isTokenEndpoint: boolean): { problem: string; remedy: string } | null {
  const oauthError = oauthErrorOf(error);
  if (oauthError !== undefined) {
    return isTokenEndpoint && CLIENT_ERRORS.has(oauthError)
      ? { problem: `${where} refused this service's client (${oauthError.slice(0, 64)})`, remedy: CLIENT_REMEDY }
      : null;
  }
  if (error instanceof client.WWWAuthenticateChallengeError) {
    // A token endpoint's 401 is its client authentication failing (RFC 6749 §5.2); elsewhere, the token's refusal.
    return isTokenEndpoint && error.status === 401
      ? { problem: `${where} refused this service's client credentials (HTTP 401)`, remedy: CLIENT_REMEDY }
      : null;
  }
  const { response, codes, messages, alg } = answerChain(error);
  if (alg?.startsWith('HS')) {
    return {
      problem: `${where} issued an id_token signed with ${alg.slice(0, 16)}, a shared secret, where this service checks id_tokens with the keys of its jwks_uri`,
      remedy: "Set the client's id_token signing algorithm at the provider to RS256 or another asymmetric one",
    };
  }
  if (response && response.status !== 200) return { problem: `${where} answered HTTP ${response.status}`, remedy: ENDPOINT_REMEDY };
  if (response || codes.includes('OAUTH_RESPONSE_IS_NOT_JSON') || codes.includes('OAUTH_PARSE_ERROR')) {
    return { problem: `${where} answered something that is not JSON`, remedy: ENDPOINT_REMEDY };
  }
  const member = messages.map((message) => /^"response" body "([^"]+)" property/.exec(message)?.[1]).find(Boolean);
  if (member) return { problem: `${where} answered without a usable ${member}`, remedy: ENDPOINT_REMEDY };
  return null;
}

/** The endpoint of the provider a URL is, for a message. */
function endpointNamed(metadata: client.ServerMetadata, url: string): string {
  const href = new URL(url).href;
  const is = (endpoint: string | undefined) => endpoint !== undefined && new URL(endpoint).href === href;
  const shown = withoutCredentials(url);
  if (is(metadata.token_endpoint)) return `its token endpoint (${shown})`;
  if (is(metadata.userinfo_endpoint)) return `its userinfo endpoint (${shown})`;
  if (is(metadata.jwks_uri)) return `its JWKS (jwks_uri ${shown})`;
  return `its endpoint ${shown}`;
}

/**
 * Runs calls of openid-client to the provider's endpoints (token, userinfo): down is
 * `ProviderUnavailable`; an answer that cannot work is `ProviderMisconfigured` naming the endpoint (and
 * the configuration is forgotten, so a mended discovery document is read at the next sign-in); a
 * refusal, or an answer that does not verify, stays as it is.
 */
async function askEndpoints<T>(config: client.Configuration, run: () => Promise<T>): Promise<T> {
  const metadata = config.serverMetadata();
  const urls: string[] = [];
  try {
    return await asked.run(urls, () => askProvider(new URL(metadata.issuer).origin, run));
  } catch (error) {
    if (error instanceof AppError) throw error;
    // Nothing asked yet (the callback's own parameters were refused): no endpoint to blame.
    const last = urls.at(-1);
    if (last === undefined) throw error;
    const isTokenEndpoint = metadata.token_endpoint !== undefined && new URL(last).href === new URL(metadata.token_endpoint).href;
    const found = answerProblem(error, endpointNamed(metadata, last), isTokenEndpoint);
    if (!found) throw error;
    forget(config);
    throw new ProviderMisconfigured(withoutCredentials(metadata.issuer), found.problem, error, found.remedy);
  }
}

/** What a discovery failure that is not an outage says is wrong with the document, for the provider's admin. */
function discoveryProblem(error: unknown, issuer: URL): string {
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  const where = 'its discovery document (/.well-known/openid-configuration)';
  if (cause instanceof Response && cause.status !== 200) return `${where} answered HTTP ${cause.status}`;
  if (code === 'OAUTH_RESPONSE_IS_NOT_JSON' || code === 'OAUTH_PARSE_ERROR' || code === 'OAUTH_INVALID_RESPONSE') {
    return `${where} is not a JSON object`;
  }
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    const named = (cause as { body?: { issuer?: unknown } } | undefined)?.body?.issuer;
    return `${where} names another issuer${typeof named === 'string' ? ` (${JSON.stringify(named.slice(0, 200))})` : ''}`;
  }
  const detail = error instanceof Error ? error.message : String(error);
  // A library's message may quote the URL it was given, credentials and all.
  const userinfo = issuer.password ? `${issuer.username}:${issuer.password}@` : issuer.username ? `${issuer.username}@` : null;
  return `${where} could not be used (${userinfo ? detail.replaceAll(userinfo, '') : detail})`;
}

/**
 * The endpoints a sign-in needs that the document does not name, as a problem; null when it names them
 * all. Every provider found by discovery signs in with an id_token, whose signature is checked with the
 * keys of `jwks_uri` (OpenID Connect Discovery 1.0 §3 requires it too).
 */
function missingEndpoints(metadata: client.ServerMetadata): string | null {
  const missing = (['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const).filter((name) => typeof metadata[name] !== 'string');
  return missing.length === 0 ? null : `its discovery document has no ${missing.join(' or ')}`;
}

/**
 * Discovery at sign-in. A provider that cannot be reached, answers 5xx or 429, or does not answer in
 * time is down: a 503 to retry. A document that answers but is wrong is a misconfiguration: a 500 that
 * says what is wrong (`ProviderMisconfigured`), never "try again later".
 */
async function discover(issuer: URL, clientId: string, clientSecret: string, options: RpOptions): Promise<client.Configuration> {
  // The message reaches whoever calls the start, so never with credentials an issuer URL may carry.
  const named = withoutCredentials(issuer.href);
  let config: client.Configuration;
  try {
    config = await client.discovery(issuer, clientId, clientSecret, undefined, {
      execute: options.allowInsecure ? [client.allowInsecureRequests] : [],
      timeout: 5,
      [client.customFetch]: fetchFor(options),
    });
  } catch (error) {
    const refused = privateTargetIn(error);
    if (refused) throw refused;
    if (isProviderDown(error)) throw new ProviderUnavailable(issuer.origin, error);
    throw new ProviderMisconfigured(named, discoveryProblem(error, issuer), error);
  }
  const problem = missingEndpoints(config.serverMetadata());
  if (problem) throw new ProviderMisconfigured(named, problem);
  return config;
}

/**
 * Checks that an issuer publishes a usable OpenID configuration before a connection is saved: the
 * Admin Portal's "test connection". Answers a message for the IT admin, or null when all is well.
 */
export async function testOidcIssuer(issuer: string, clientId: string, clientSecret: string, options: RpOptions): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'The issuer must be a URL such as https://idp.example.com';
  }
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) return 'The issuer must use https://';
  const problem = await outboundTargetProblem(url.href, options);
  if (problem) return `The issuer ${problem}`;
  try {
    const config = await client.discovery(url, clientId, clientSecret, undefined, {
      execute: options.allowInsecure ? [client.allowInsecureRequests] : [],
      timeout: 5,
      [client.customFetch]: fetchFor(options),
    });
    const metadata = config.serverMetadata();
    if (!metadata.authorization_endpoint || !metadata.token_endpoint || !metadata.jwks_uri) {
      return 'The provider’s discovery document lacks an authorization, token or JWKS endpoint';
    }
    // The endpoints this service calls (the authorization endpoint is the browser's to visit).
    for (const [name, endpoint] of [
      ['token endpoint', metadata.token_endpoint],
      ['JWKS endpoint', metadata.jwks_uri],
      ['userinfo endpoint', metadata.userinfo_endpoint],
    ] as const) {
      const refused = endpoint ? await outboundTargetProblem(endpoint, options) : null;
      if (refused) return `The provider’s ${name} ${refused}`;
    }
    return null;
  } catch (error) {
    const refused = privateTargetIn(error);
    if (refused) return refused.message;
    const reason = error instanceof Error ? error.message : String(error);
    return `Could not read a valid OpenID configuration from ${issuer}/.well-known/openid-configuration: ${reason}`;
  }
}

export interface AuthorizationRequest {
  url: string;
  /** Kept server-side until the callback. */
  codeVerifier: string;
  nonce: string | null;
}

export async function authorizationRequest(
  config: client.Configuration,
  params: { redirectUri: string; scopes: string[]; state: string; useNonce: boolean; loginHint?: string },
): Promise<AuthorizationRequest> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const nonce = params.useNonce ? client.randomNonce() : null;
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: params.redirectUri,
    response_type: 'code',
    scope: params.scopes.join(' '),
    state: params.state,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    ...(nonce ? { nonce } : {}),
    ...(params.loginHint ? { login_hint: params.loginHint } : {}),
  });
  return { url: url.href, codeVerifier, nonce };
}

export interface ProviderIdentity {
  /** Who vouches for the subject: the id_token's `iss` (GitHub: its base URL); '' when unknown. */
  issuer: string;
  /** The provider's stable id of the user (`sub`); '' when the provider sent none. */
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** Every claim the provider sent (id_token claims merged with userinfo), for attribute mapping. */
  profile: Record<string, unknown>;
  accessToken: string;
}

/**
 * Redeems the code at the provider: openid-client checks the state, the PKCE verifier, and for
 * OpenID providers the id_token's signature (with the keys of its jwks_uri), issuer, audience, expiry
 * and nonce. What the endpoints answer is classified by `askEndpoints`.
 */
export async function redeemCode(
  config: client.Configuration,
  callbackUrl: URL,
  checks: { state: string; codeVerifier: string; nonce: string | null },
): Promise<ProviderIdentity> {
  const tokens = await askEndpoints(config, () =>
    client.authorizationCodeGrant(config, callbackUrl, {
      expectedState: checks.state,
      pkceCodeVerifier: checks.codeVerifier,
      ...(checks.nonce ? { expectedNonce: checks.nonce } : {}),
    }),
  );
  const claims = tokens.claims();
  if (!claims) {
    return { issuer: '', subject: '', email: null, emailVerified: false, profile: {}, accessToken: tokens.access_token };
  }
  let profile: Record<string, unknown> = { ...claims };
  if (config.serverMetadata().userinfo_endpoint) {
    const info = await askEndpoints(config, () => client.fetchUserInfo(config, tokens.access_token, claims.sub));
    profile = { ...info, ...profile };
  }
  return {
    issuer: claims.iss,
    subject: claims.sub,
    email: typeof profile.email === 'string' ? canonicalEmail(profile.email) : null,
    emailVerified: profile.email_verified === true,
    profile,
    accessToken: tokens.access_token,
  };
}
