import type { EntityManager } from '@mikro-orm/postgresql';
import express, { Router, type Request, type Response } from 'express';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { originOfRequest, type AppDeps } from '../../core/context.ts';
import { authenticate } from '../../core/auth.ts';
import { sendError } from '../../core/envelope.ts';
import { toAppError } from '../../core/error-normalize.ts';
import { AppError, methodNotAllowed } from '../../core/errors.ts';
import { isId } from '../../core/ids.ts';
import { rateLimitedError, type LimitName } from '../../core/rate-limit.ts';
import { getRequestInfo } from '../../core/request-info.ts';
import { isStorableText, UnstorableTextError } from '../../core/storable-text.ts';
import { TENANT_FILTER } from '../../db/tenant.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { organizationForEmail } from '../organizations/organizations.service.ts';
import { findConnection, serviceProviderOf } from './connections.ts';
import { authnRequestUrl, spMetadata, validateSamlResponse } from './saml.ts';
import {
  checkRedirectUri,
  consumeState,
  issueCode,
  ProviderRefusal,
  resolveUser,
  resultRedirect,
  ssoUser,
  startFlow,
  type CalledBackFlow,
} from './external-sign-in.ts';
import {
  authorizationRequest,
  codeRefusalOf,
  providerConfiguration,
  ProviderMisconfigured,
  ProviderUnavailable,
  redeemCode,
  rpOptions,
  type ProviderIdentity,
} from './oidc-rp.ts';
import { callbackUrl, enabledProvider, endpointOf, githubIdentity, issuerChosenByWorkspace, PRESETS } from './social.ts';
import { SOCIAL_PROVIDERS, type SocialProviderName } from './social-provider.entity.ts';
import type { OidcConnectionConfig, SamlConnectionConfig } from './sso-connection.entity.ts';
import { randomBytes } from 'node:crypto';
import { canonicalEmail, EMAIL_PATTERN } from '../../core/addresses.ts';

/** A query parameter given once, as text the database can hold (NUL or a lone surrogate is 400). */
function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (typeof value !== 'string' || value === '') return undefined;
  if (!isStorableText(value)) throw new UnstorableTextError([name]);
  return value;
}

/** The app's `state`: opaque printable text (RFC 6749's VSCHAR), bounded like the redirect URI. */
const APP_STATE = /^[\x20-\x7e]{1,512}$/;

/**
 * The app's own `state` at the start of a sign-in, if it sent one: handed back on its redirect with
 * the result, so the app ties the result to the browser session that asked for it (a login CSRF
 * otherwise hands a victim the attacker's code), as Auth0 and WorkOS do. Sent twice or not printable
 * text of at most 512 characters is 400.
 */
function appState(req: Request): string | undefined {
  const value = req.query.state;
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !APP_STATE.test(value)) {
    throw new AppError('BAD_REQUEST', 'state must be one value of at most 512 printable ASCII characters', {
      details: [{ path: 'state', message: 'at most 512 printable ASCII characters, sent once' }],
    });
  }
  return value;
}

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The app's PKCE `code_challenge` (RFC 7636), if it sent one: the exchange of the resulting code then
 * needs the matching `code_verifier`, so a code read from a redirect is of no use to anyone else (a
 * public app's redirect, a custom scheme). Only `S256` (the default here); `plain` adds nothing over
 * the code itself and is refused, as OAuth 2.1 does.
 */
function appCodeChallenge(req: Request): string | undefined {
  const challenge = req.query.code_challenge;
  const method = req.query.code_challenge_method;
  if (challenge === undefined || challenge === '') {
    if (method !== undefined) {
      throw new AppError('BAD_REQUEST', 'code_challenge_method needs a code_challenge', {
        details: [{ path: 'code_challenge', message: 'required with code_challenge_method' }],
      });
    }
    return undefined;
  }
  if (typeof challenge !== 'string' || !CODE_CHALLENGE.test(challenge)) {
    throw new AppError('BAD_REQUEST', 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)', {
      details: [{ path: 'code_challenge', message: 'base64url, 43 characters, sent once' }],
    });
  }
  if (method !== undefined && method !== 'S256') {
    throw new AppError('BAD_REQUEST', 'code_challenge_method must be S256', {
      details: [{ path: 'code_challenge_method', message: 'only S256' }],
    });
  }
  return challenge;
}

/** The provider answered the callback with an OAuth error instead of a code (the user cancelled, or it refused). */
function refuseProviderError(req: Request): void {
  const error = query(req, 'error');
  if (error !== undefined) throw new ProviderRefusal(error);
}

/**
 * The count a browser route spends: `/api/v1/auth/oauth/*` the spec's 30 per minute per IP, the SSO
 * routes the same rate on a count of their own (rate-limit.ts).
 */
function limitOf(path: string): LimitName {
  return path.startsWith('/api/v1/auth/sso/') ? 'ssoAuth' : 'socialAuth';
}

/**
 * A start the browser navigated to for the dashboard (no `redirect_uri`: the result goes to
 * BASE_URL/login/callback); its failure is shown there rather than as the envelope on a blank page.
 * A navigation says `Sec-Fetch-Mode: navigate`; browsers send no `Sec-Fetch-*` to a plain-http origin
 * other than localhost, where a navigation is told by preferring HTML to JSON (`fetch`, curl and SDKs
 * send `*` or nothing, and keep the envelope).
 */
function startedByDashboard(req: Request): boolean {
  if (req.method !== 'GET' || req.query.redirect_uri !== undefined) return false;
  const mode = req.get('sec-fetch-mode');
  return mode ? mode === 'navigate' : req.accepts(['application/json', 'text/html']) === 'text/html';
}

/**
 * The `state` a failed start hands back with its error (RFC 6749 §4.1.2.1: the client's exact value),
 * so the dashboard's tab knows the refusal is of the sign-in it started; none when the state itself
 * is what the start refused.
 */
function echoedState(req: Request): string | undefined {
  const value = req.query.state;
  return typeof value === 'string' && APP_STATE.test(value) ? value : undefined;
}

/** RFC 6749 §4.1.2.1's error for a start that failed before leaving for the provider. */
function startRefusal(appError: AppError, internal: boolean): string {
  if (internal || appError.appCode === 'INTERNAL') return 'server_error';
  if (appError.appCode === 'RATE_LIMITED' || appError.appCode === 'UNAVAILABLE') return 'temporarily_unavailable';
  return appError.appCode === 'BAD_REQUEST' ? 'invalid_request' : 'access_denied';
}

/**
 * The browser flows' answers: a redirect when they go on, the envelope when they cannot; with
 * `dashboardFailures` (the starts: `startHandler`), a failed start the dashboard navigated to goes back
 * to its /login/callback with `?error=&error_description=`, as a provider's refusal does.
 */
function handler(deps: AppDeps, run: (req: Request, res: Response) => Promise<void>, options: { dashboardFailures?: boolean } = {}) {
  const fail = (req: Request, res: Response, appError: AppError, internal: boolean) => {
    if (!options.dashboardFailures || !startedByDashboard(req)) return sendError(res, appError);
    const description = internal ? 'The sign-in could not be started; try again later' : appError.message;
    res.redirect(
      303,
      resultRedirect(
        `${deps.config.BASE_URL}/login/callback`,
        { error: startRefusal(appError, internal), error_description: description },
        echoedState(req),
      ),
    );
  };
  return async (req: Request, res: Response) => {
    try {
      const decision = await deps.rateLimits.consume(limitOf(req.path), getRequestInfo(req).ip);
      if (!decision.allowed) return fail(req, res, rateLimitedError(decision), false);
      await run(req, res);
    } catch (error) {
      const { appError, internal } = toAppError(error);
      if (internal) deps.log.error('external sign-in failed', { error });
      // Not our fault but the operator's to mend: their log says so, as a callback's does.
      else if (appError instanceof ProviderMisconfigured) {
        deps.log.warn(MISCONFIGURED_WARNING, { error: appError.message });
      }
      fail(req, res, appError, internal);
    }
  };
}

/** A start's handler: its failures reach the dashboard's /login/callback when the dashboard navigated to it. */
function startHandler(deps: AppDeps, run: (req: Request, res: Response) => Promise<void>) {
  return handler(deps, run, { dashboardFailures: true });
}

/**
 * The workspace a sign-in starts in: `?workspace_id=` (a browser link), else `X-Tenant-ID`, else the
 * workspace of the credential sent (a backend asking for the redirect with its API key), as on the
 * other public calls.
 */
async function workspaceOf(deps: AppDeps, req: Request): Promise<string> {
  const authorization = req.get('authorization');
  const workspaceId =
    query(req, 'workspace_id') ??
    (req.get('x-tenant-id')?.trim() || undefined) ??
    (authorization ? (await authenticate(deps, authorization)).workspaceId : undefined);
  if (!workspaceId) throw new AppError('BAD_REQUEST', 'Name the workspace with ?workspace_id= or the X-Tenant-ID header');
  const found = isId('wsp', workspaceId)
    ? await deps.orm.em.getConnection().execute<{ id: string }[]>('select id from workspaces where id = ?', [workspaceId])
    : [];
  if (found.length === 0) throw new AppError('NOT_FOUND', 'No such workspace');
  return workspaceId;
}

const MISCONFIGURED_WARNING = 'external sign-in: the identity provider is misconfigured';
const UNAVAILABLE_DESCRIPTION = 'The identity provider could not be reached or did not answer; try again later';

/** Saves what the provider said: the account, its metadata, its organization; returns the user id. */
type Provision = (scope: AuditScope) => Promise<string>;

/**
 * After the state is consumed: asks the provider (network calls, outside any transaction), then
 * provisions the account in one transaction. Failures go back to the app as `?error=` on its redirect
 * URI (as an OAuth client expects) and are audited; the state cannot be tried again.
 */
async function finish(
  deps: AppDeps,
  res: Response,
  flow: CalledBackFlow,
  origin: ReturnType<typeof originOfRequest>,
  identify: (em: EntityManager) => Promise<Provision>,
) {
  const em = deps.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { workspaceId: flow.workspaceId });
  const scope: AuditScope = { em, workspaceId: flow.workspaceId, actor: { type: 'system', id: null }, ...origin };
  try {
    const provision = await identify(em);
    const userId = await em.transactional((tx) => provision({ ...scope, em: tx }));
    const code = await issueCode(deps, em, flow.id, userId);
    res.redirect(303, resultRedirect(flow.redirectUri, { code }, flow.flow.appState));
  } catch (error) {
    const failed = callbackFailure(error);
    if (failed.warning) {
      const { message, cause } = failed.warning;
      deps.log.warn(message, { error: cause instanceof Error ? cause.message : String(cause) });
    }
    const failure = em.fork();
    failure.setFilterParams(TENANT_FILTER, { workspaceId: flow.workspaceId });
    recordAudit(
      { ...scope, em: failure },
      {
        eventType: 'auth.login',
        outcome: 'failure',
        details: { method: flow.kind, via: flow.flow.source, reason: failed.reason, ...failed.details },
      },
    );
    await failure.flush();
    res.redirect(303, resultRedirect(flow.redirectUri, { error: failed.error, error_description: failed.description }, flow.flow.appState));
  }
}

/** How a callback that failed is audited (`reason`), told to the app (RFC 6749 §4.1.2.1) and logged. */
interface CallbackFailure {
  reason: string;
  error: string;
  description: string;
  /** More for the audit row: what the provider said when it refused. */
  details?: { provider_error: string | undefined };
  /** For the operator, with its cause; none for a refusal (a person's or a provider's no). */
  warning?: { message: string; cause: unknown };
}

function callbackFailure(error: unknown): CallbackFailure {
  const { appError, internal } = toAppError(error);
  if (appError instanceof ProviderRefusal) {
    const { oauthError, message, providerError, misconfigured } = appError;
    const details = { provider_error: providerError };
    // Refused for the request we sent (client, scopes): the operator's to mend, as a wrong discovery document is.
    if (misconfigured) {
      const warning = { message: MISCONFIGURED_WARNING, cause: error };
      return { reason: 'provider_misconfigured', error: oauthError, description: message, details, warning };
    }
    return { reason: 'provider_refused', error: oauthError, description: message, details };
  }
  // Down (unreachable, 5xx, no answer in time) is not a refusal: RFC 6749's temporarily_unavailable, to retry.
  if (appError instanceof ProviderUnavailable) {
    const warning = { message: 'external sign-in: the identity provider is down', cause: appError.cause };
    return { reason: 'provider_unavailable', error: 'temporarily_unavailable', description: UNAVAILABLE_DESCRIPTION, warning };
  }
  // A wrong discovery document will not mend itself: server_error, saying what is wrong.
  if (appError instanceof ProviderMisconfigured) {
    const warning = { message: MISCONFIGURED_WARNING, cause: error };
    return { reason: 'provider_misconfigured', error: 'server_error', description: appError.message, warning };
  }
  // The provider's token endpoint said no to the code (expired, used): its refusal, not a doubtful answer.
  const refusedCode = internal ? codeRefusalOf(error) : undefined;
  if (refusedCode !== undefined) {
    return {
      reason: 'provider_refused',
      error: 'access_denied',
      description: `The identity provider refused the sign-in’s code (${refusedCode}); start the sign-in again`,
      details: { provider_error: refusedCode },
    };
  }
  if (internal) {
    const warning = { message: 'external sign-in refused', cause: error };
    return {
      reason: 'provider_error',
      error: 'access_denied',
      description: 'The identity provider’s answer could not be verified',
      warning,
    };
  }
  return { reason: appError.appCode, error: 'access_denied', description: appError.message };
}

function callbackUrlOf(deps: AppDeps, req: Request): URL {
  return new URL(req.originalUrl, deps.config.BASE_URL);
}

async function socialIdentity(
  deps: AppDeps,
  em: EntityManager,
  req: Request,
  flow: CalledBackFlow,
  provider: string,
): Promise<{ identity: ProviderIdentity; issuerChosenByWorkspace: boolean }> {
  const row = await enabledProvider(em, provider);
  const config = await providerConfiguration(endpointOf(deps, row), rpOptions(deps));
  const identity = await redeemCode(config, callbackUrlOf(deps, req), {
    state: query(req, 'state') as string,
    codeVerifier: flow.flow.codeVerifier as string,
    nonce: flow.flow.nonce ?? null,
  });
  return {
    identity: PRESETS[row.provider].oauth ? await githubIdentity(row, identity.accessToken, rpOptions(deps)) : identity,
    issuerChosenByWorkspace: issuerChosenByWorkspace(row),
  };
}

/** A provider name the service knows (in any workspace), else 404 before anything else is read. */
function knownProvider(provider: string): SocialProviderName {
  if (!(SOCIAL_PROVIDERS as readonly string[]).includes(provider)) throw new AppError('NOT_FOUND', `No provider is called ${provider}`);
  return provider as SocialProviderName;
}

export function externalSignInRoutes(deps: AppDeps): Router {
  const router = Router();

  router.get(
    '/api/v1/auth/oauth/:provider/start',
    startHandler(deps, async (req, res) => {
      const provider = knownProvider(String(req.params.provider));
      const workspaceId = await workspaceOf(deps, req);
      const em = deps.orm.em.fork();
      em.setFilterParams(TENANT_FILTER, { workspaceId });
      const redirectUri = await checkRedirectUri(deps, em, query(req, 'redirect_uri'));
      const forApp = appState(req);
      const appChallenge = appCodeChallenge(req);
      const row = await enabledProvider(em, provider);
      const config = await providerConfiguration(endpointOf(deps, row), rpOptions(deps));
      const state = randomBytes(32).toString('base64url');
      const request = await authorizationRequest(config, {
        redirectUri: callbackUrl(deps.config.BASE_URL, row.provider),
        scopes: row.config.scopes,
        state,
        useNonce: !PRESETS[row.provider].oauth,
      });
      await startFlow(deps, em, {
        workspaceId,
        kind: 'social',
        redirectUri,
        state,
        flow: {
          source: row.provider,
          codeVerifier: request.codeVerifier,
          nonce: request.nonce,
          appState: forApp,
          appCodeChallenge: appChallenge,
        },
      });
      res.redirect(302, request.url);
    }),
  );

  router.get(
    '/api/v1/auth/oauth/:provider/callback',
    handler(deps, async (req, res) => {
      const provider = knownProvider(String(req.params.provider));
      const state = query(req, 'state');
      if (!state) throw new AppError('BAD_REQUEST', 'The callback has no state');
      const flow = await consumeState(deps, deps.orm.em.fork(), state, 'social');
      await finish(deps, res, flow, originOfRequest(req), async (em) => {
        if (flow.flow.source !== provider)
          throw new AppError('BAD_REQUEST', 'The callback came from another provider than the sign-in started with');
        refuseProviderError(req);
        const { identity, issuerChosenByWorkspace: chosen } = await socialIdentity(deps, em, req, flow, provider);
        const email = identity.email;
        if (!email) throw new AppError('FORBIDDEN', 'The provider did not share a verified email address');
        return async (scope) =>
          (
            await resolveUser(
              scope,
              {
                email,
                emailVerified: identity.emailVerified,
                profile: identity.profile,
                via: provider,
                subject: { provider, issuer: identity.issuer, subject: identity.subject },
              },
              { create: true, roleKey: 'member', issuerChosenByWorkspace: chosen },
              deps.clock.now(),
            )
          ).id;
      });
    }),
  );

  router.get(
    '/api/v1/auth/sso/start',
    startHandler(deps, async (req, res) => {
      const workspaceId = await workspaceOf(deps, req);
      const given = query(req, 'email');
      const email = given === undefined ? undefined : canonicalEmail(given);
      if (email !== undefined && !EMAIL_PATTERN.test(email)) {
        throw new AppError('BAD_REQUEST', 'email must be an email address', {
          details: [{ path: 'email', message: 'must be an email address' }],
        });
      }
      const organizationId = query(req, 'organization_id');
      if (!email && !organizationId) throw new AppError('BAD_REQUEST', 'Send the user’s email (or an organization_id)');
      const em = deps.orm.em.fork();
      em.setFilterParams(TENANT_FILTER, { workspaceId });
      const redirectUri = await checkRedirectUri(deps, em, query(req, 'redirect_uri'));
      const forApp = appState(req);
      const appChallenge = appCodeChallenge(req);
      const org = organizationId
        ? isId('org', organizationId)
          ? await em.findOne(Organization, { id: organizationId })
          : null
        : await organizationForEmail(em, email as string);
      const connection = org?.sso.enabled ? await findConnection(em, org.id) : null;
      if (!org || !connection) throw new AppError('NOT_FOUND', 'No organization signs in with SSO for this email domain');
      if (connection.kind === 'saml') {
        const state = randomBytes(32).toString('base64url');
        let requestId = '';
        const request = await authnRequestUrl(samlServiceProvider(deps, org.id), connection.config as SamlConnectionConfig, state, {
          store: {
            save: async (id) => {
              requestId = id;
            },
            take: async () => false,
          },
        });
        await startFlow(deps, em, {
          workspaceId,
          kind: 'sso',
          redirectUri,
          state,
          flow: { source: org.id, requestId, appState: forApp, appCodeChallenge: appChallenge },
        });
        res.redirect(302, request.url);
        return;
      }
      const oidc = connection.config as OidcConnectionConfig;
      const config = await providerConfiguration(
        { issuer: oidc.issuer, clientId: oidc.client_id, clientSecret: deps.box.open(connection.secretSealed as string) },
        rpOptions(deps),
      );
      const state = randomBytes(32).toString('base64url');
      const request = await authorizationRequest(config, {
        redirectUri: `${deps.config.BASE_URL}/api/v1/auth/sso/oidc/callback`,
        scopes: oidc.scopes,
        state,
        useNonce: true,
        ...(email ? { loginHint: email } : {}),
      });
      await startFlow(deps, em, {
        workspaceId,
        kind: 'sso',
        redirectUri,
        state,
        flow: {
          source: org.id,
          codeVerifier: request.codeVerifier,
          nonce: request.nonce,
          appState: forApp,
          appCodeChallenge: appChallenge,
        },
      });
      res.redirect(302, request.url);
    }),
  );

  router.get(
    '/api/v1/auth/sso/oidc/callback',
    handler(deps, async (req, res) => {
      const state = query(req, 'state');
      if (!state) throw new AppError('BAD_REQUEST', 'The callback has no state');
      const flow = await consumeState(deps, deps.orm.em.fork(), state, 'sso');
      await finish(deps, res, flow, originOfRequest(req), async (em) => {
        refuseProviderError(req);
        const org = await em.findOne(Organization, { id: flow.flow.source });
        const connection = org ? await findConnection(em, org.id) : null;
        if (!org || !connection || connection.kind !== 'oidc' || !org.sso.enabled) {
          throw new AppError('FORBIDDEN', 'This organization no longer signs in with this connection');
        }
        const oidc = connection.config as OidcConnectionConfig;
        const config = await providerConfiguration(
          { issuer: oidc.issuer, clientId: oidc.client_id, clientSecret: deps.box.open(connection.secretSealed as string) },
          rpOptions(deps),
        );
        const identity = await redeemCode(config, callbackUrlOf(deps, req), {
          state,
          codeVerifier: flow.flow.codeVerifier as string,
          nonce: flow.flow.nonce ?? null,
        });
        return (scope) => ssoUser(deps, scope, org, identity.email, identity.profile);
      });
    }),
  );

  router.get(
    '/api/v1/auth/sso/saml/:organizationId/metadata',
    handler(deps, async (req, res) => {
      const organizationId = String(req.params.organizationId);
      if (!isId('org', organizationId)) throw new AppError('NOT_FOUND', 'No such organization');
      res.type('application/samlmetadata+xml').send(spMetadata(samlServiceProvider(deps, organizationId)));
    }),
  );

  /**
   * The SAML assertion consumer: the IdP's POSTed response, answered to the AuthnRequest whose
   * RelayState (our state) it carries. The state is consumed first, so a response is accepted once.
   */
  router.post(
    // A pattern without a named parameter: Express would decode `:organizationId` before the handler
    // and answer a malformed escape (`%`) 404 before the post is read; the REST door reads the body
    // first (400 for one that is no form), and the id, kept raw, then matches nothing.
    SAML_ACS_PATH,
    express.urlencoded({ extended: false, limit: '512kb' }),
    handler(deps, async (req, res) => {
      // Not a form (JSON, no body at all): nothing was parsed, and the post lacks what it needs (400).
      const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
      const relayState = typeof body.RelayState === 'string' ? body.RelayState : '';
      const samlResponse = typeof body.SAMLResponse === 'string' ? body.SAMLResponse : '';
      if (!relayState || !samlResponse)
        throw new AppError('BAD_REQUEST', 'The SAML post needs SAMLResponse and RelayState (IdP-initiated sign-in is not supported)');
      const flow = await consumeState(deps, deps.orm.em.fork(), relayState, 'sso');
      const organizationId = req.path.split('/')[6] ?? '';
      await finish(deps, res, flow, originOfRequest(req), async (em) => {
        if (flow.flow.source !== organizationId) throw new AppError('BAD_REQUEST', 'The response reached another organization’s endpoint');
        const org = await em.findOne(Organization, { id: organizationId });
        const connection = org ? await findConnection(em, org.id) : null;
        if (!org || !connection || connection.kind !== 'saml' || !org.sso.enabled) {
          throw new AppError('FORBIDDEN', 'This organization no longer signs in with this connection');
        }
        const profile = await validateSamlResponse(
          samlServiceProvider(deps, org.id),
          connection.config as SamlConnectionConfig,
          samlResponse,
          {
            store: { save: async () => undefined, take: async (id) => id === flow.flow.requestId },
          },
        );
        return (scope) =>
          ssoUser(deps, scope, org, profile.email, { ...profile.attributes, email: profile.email, name_id: profile.name_id });
      });
    }),
  );

  answerOtherMethods(deps, router);
  return router;
}

/**
 * The browser routes asked with another method, as the REST door answers its own paths: `OPTIONS` is
 * 204 with `Allow`, any other method 405 with `Allow` in the envelope (a 404 would say the path does
 * not exist). They count toward their path's limit like any other call there.
 */
function answerOtherMethods(deps: AppDeps, router: Router): void {
  const methods: [string[], string][] = [
    [['/api/v1/auth/oauth/:provider/start', '/api/v1/auth/oauth/:provider/callback', '/api/v1/auth/sso/start'], 'GET, HEAD, OPTIONS'],
    [['/api/v1/auth/sso/oidc/callback', '/api/v1/auth/sso/saml/:organizationId/metadata'], 'GET, HEAD, OPTIONS'],
    [['/api/v1/auth/sso/saml/:organizationId/acs'], 'POST, OPTIONS'],
  ];
  for (const [paths, allowed] of methods) {
    router.all(
      paths,
      handler(deps, async (req, res) => {
        if (req.method !== 'OPTIONS') throw methodNotAllowed(req.method, req.path, allowed);
        res.setHeader('Allow', allowed);
        res.status(204).end();
      }),
    );
  }
}

/**
 * `/api/v1/auth/sso/saml/{organizationId}/acs`, with no capture group (Express decodes those too). The
 * id is the path's sixth segment, as sent: an id is never escaped.
 */
export const SAML_ACS_PATH = /^\/api\/v1\/auth\/sso\/saml\/[^/]+\/acs\/?$/i;

function samlServiceProvider(deps: AppDeps, organizationId: string) {
  const sp = serviceProviderOf(deps.config.BASE_URL, organizationId);
  return { entityId: sp.entity_id, acsUrl: sp.acs_url };
}
