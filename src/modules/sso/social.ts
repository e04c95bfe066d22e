import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { pageOf, pageParams, toPage, type PageQuery } from '../../core/pagination.ts';
import { mask, secretDiffers } from './connections.ts';
import type { ServerMetadata } from 'openid-client';
import {
  askProvider,
  ProviderMisconfigured,
  ProviderUnavailable,
  withoutCredentials,
  type ProviderEndpoint,
  type ProviderIdentity,
} from './oidc-rp.ts';
import { SOCIAL_PROVIDERS, SocialProvider, type SocialProviderName } from './social-provider.entity.ts';
import { canonicalEmail } from '../../core/addresses.ts';
import { labelInput } from '../../core/labels.ts';
import { differs } from '../../core/patch.ts';
import { outboundFetch, outboundTargetProblem, type OutboundPolicy } from '../../core/outbound.ts';

interface Preset {
  displayName: string;
  issuer: string | null;
  scopes: string[];
  /**
   * The published endpoints of the default issuer, so a sign-in starts without fetching discovery
   * (and Microsoft's multi-tenant documents name a tenant-specific issuer that discovery would refuse).
   */
  metadata?: ServerMetadata;
  /** Plain OAuth 2.0 (GitHub): endpoints instead of discovery, and a profile API instead of an id_token. */
  oauth?: { authorization: string; token: string; api: string };
}

export const PRESETS: Record<SocialProviderName, Preset> = {
  google: {
    displayName: 'Google',
    issuer: 'https://accounts.google.com',
    scopes: ['openid', 'email', 'profile'],
    metadata: {
      issuer: 'https://accounts.google.com',
      authorization_endpoint: 'https://accounts.google.com/o/oauth2/v2/auth',
      token_endpoint: 'https://oauth2.googleapis.com/token',
      jwks_uri: 'https://www.googleapis.com/oauth2/v3/certs',
      userinfo_endpoint: 'https://openidconnect.googleapis.com/v1/userinfo',
    },
  },
  microsoft: {
    displayName: 'Microsoft',
    issuer: 'https://login.microsoftonline.com/consumers/v2.0',
    scopes: ['openid', 'email', 'profile'],
    metadata: {
      // Personal accounts' tenant: what the id_tokens of /consumers name as their issuer.
      issuer: 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0',
      authorization_endpoint: 'https://login.microsoftonline.com/consumers/oauth2/v2.0/authorize',
      token_endpoint: 'https://login.microsoftonline.com/consumers/oauth2/v2.0/token',
      jwks_uri: 'https://login.microsoftonline.com/consumers/discovery/v2.0/keys',
      userinfo_endpoint: 'https://graph.microsoft.com/oidc/userinfo',
    },
  },
  github: {
    displayName: 'GitHub',
    issuer: null,
    scopes: ['read:user', 'user:email'],
    oauth: {
      authorization: 'https://github.com/login/oauth/authorize',
      token: 'https://github.com/login/oauth/access_token',
      api: 'https://api.github.com',
    },
  },
  oidc: { displayName: 'Single sign-on', issuer: null, scopes: ['openid', 'email', 'profile'] },
};

export const providerNameInput = z.enum(SOCIAL_PROVIDERS);

const httpUrl = z.url({ protocol: /^https?$/ }).max(500);

export const putProviderInput = z.strictObject({
  provider: providerNameInput,
  client_id: z.string().trim().min(1).max(300),
  /** Required the first time; omitted later, the stored secret is kept. */
  client_secret: z.string().min(1).max(500).optional(),
  /** Generic OIDC: required. Microsoft: a tenant-specific issuer. Google: not accepted. */
  issuer: httpUrl.optional(),
  /** GitHub Enterprise Server: its base URL (https://github.example.com). */
  github_base_url: httpUrl.optional(),
  scopes: z
    .array(z.string().regex(/^[\x21-\x7e]{1,100}$/))
    .max(20)
    .optional(),
  display_name: labelInput(60).optional(),
  enabled: z.boolean().default(true),
});

/** A provider's configuration, before and after its client secret (which each view shows its own way). */
const settingsHead = { provider: providerNameInput, display_name: z.string(), enabled: z.boolean(), client_id: z.string() };
const settingsTail = { issuer: z.string().nullable(), scopes: z.array(z.string()), callback_url: z.string(), updated_at: z.string() };

/** What a PUT answers: the secret masked (its last four characters), as the Admin Portal shows it. */
export const providerOutput = z.object({ ...settingsHead, client_secret: z.string(), ...settingsTail }).meta({ id: 'SocialProvider' });

/** What the GET answers: no part of the secret, only whether there is one. */
export const storedProviderOutput = z
  .object({ ...settingsHead, client_secret_set: z.boolean(), ...settingsTail })
  .meta({ id: 'SocialProviderSettings' });

export const providerPathInput = z.object({ provider: providerNameInput });

export const enabledProviderOutput = z
  .object({ provider: providerNameInput, display_name: z.string(), start_url: z.string() })
  .meta({ id: 'EnabledSocialProvider' });
export const enabledProviderPage = pageOf(enabledProviderOutput);
export const listProvidersInput = z.object({ ...pageParams }).prefault({});

export function callbackUrl(baseUrl: string, provider: SocialProviderName): string {
  return `${baseUrl}/api/v1/auth/oauth/${provider}/callback`;
}

/** The configuration as stored, the secret left out. */
function settings(deps: AppDeps, row: SocialProvider): Omit<z.infer<typeof providerOutput>, 'client_secret'> {
  return {
    provider: row.provider,
    display_name: row.config.display_name,
    enabled: row.enabled,
    client_id: row.config.client_id,
    issuer: row.config.issuer,
    scopes: row.config.scopes,
    callback_url: callbackUrl(deps.config.BASE_URL, row.provider),
    updated_at: row.updatedAt.toISOString(),
  };
}

function view(deps: AppDeps, row: SocialProvider): z.infer<typeof providerOutput> {
  return { ...settings(deps, row), client_secret: mask(deps.box.open(row.secretSealed)) };
}

/**
 * A provider's configuration for the workspace's admins, enabled or not (the public list shows enabled
 * ones only); 404 when it was never configured.
 */
export async function getProvider(
  deps: AppDeps,
  em: EntityManager,
  provider: SocialProviderName,
): Promise<z.infer<typeof storedProviderOutput>> {
  const row = await em.findOne(SocialProvider, { provider }, { populate: ['secretSealed'] });
  if (!row) throw new AppError('NOT_FOUND', `Sign-in with ${PRESETS[provider].displayName} is not configured in this workspace`);
  return { ...settings(deps, row), client_secret_set: !!row.secretSealed };
}

/**
 * The scope a sign-in cannot do without, added when a workspace's list leaves it out: `openid` for an
 * OpenID provider (no id_token, so no subject and no email, without it; OpenID Connect Core 3.1.2.1),
 * `user:email` for GitHub (its verified addresses). Other scopes are the workspace's choice.
 */
function withRequiredScope(scopes: string[], provider: SocialProviderName): string[] {
  const required = PRESETS[provider].oauth ? 'user:email' : 'openid';
  return scopes.includes(required) ? scopes : [required, ...scopes];
}

/**
 * Creates or replaces a provider's configuration; says which, so the call answers 201 or 200. Runs
 * outside the call's transaction (`ownTransaction`): its checks come first, then one transaction saves.
 */
export async function putProvider(
  deps: AppDeps,
  scope: AuditScope,
  input: z.infer<typeof putProviderInput>,
  now: Date,
): Promise<{ provider: z.infer<typeof providerOutput>; created: boolean }> {
  if (input.provider === 'oidc' && !input.issuer) {
    throw new AppError('BAD_REQUEST', 'A generic OpenID provider needs its issuer', {
      details: [{ path: 'issuer', message: 'required for oidc' }],
    });
  }
  if (input.provider === 'google' && input.issuer) {
    throw new AppError('BAD_REQUEST', 'Google’s issuer is fixed', { details: [{ path: 'issuer', message: 'not accepted for google' }] });
  }
  if (input.github_base_url && input.provider !== 'github') {
    throw new AppError('BAD_REQUEST', 'github_base_url is for GitHub only', {
      details: [{ path: 'github_base_url', message: 'github only' }],
    });
  }
  await checkProviderTargets(deps, input);
  return scope.em.transactional((em) => saveProvider(deps, { ...scope, em }, input, now));
}

/**
 * The servers a workspace names for its provider (an issuer, a GitHub Enterprise host) are called by
 * this service: unless `ALLOW_PRIVATE_IDP_TARGETS`, never at a loopback or private address, checked
 * here when saved (400) and again, after DNS, on every call (core/outbound.ts). Before any transaction:
 * a DNS lookup holds no database connection.
 */
async function checkProviderTargets(deps: AppDeps, input: z.infer<typeof putProviderInput>): Promise<void> {
  const options = { allowPrivate: deps.config.ALLOW_PRIVATE_IDP_TARGETS };
  for (const path of ['issuer', 'github_base_url'] as const) {
    const url = input[path];
    const problem = url ? await outboundTargetProblem(url, options) : null;
    if (problem) {
      throw new AppError('BAD_REQUEST', `The ${path} ${problem}: identity providers must be on public addresses`, {
        details: [{ path, message: problem }],
      });
    }
  }
}

async function saveProvider(
  deps: AppDeps,
  scope: AuditScope,
  input: z.infer<typeof putProviderInput>,
  now: Date,
): Promise<{ provider: z.infer<typeof providerOutput>; created: boolean }> {
  const preset = PRESETS[input.provider];
  let row = await scope.em.findOne(SocialProvider, { provider: input.provider }, { populate: ['secretSealed'] });
  const created = !row;
  if (!row && !input.client_secret) {
    throw new AppError('BAD_REQUEST', 'client_secret is required when a provider is first configured', {
      details: [{ path: 'client_secret', message: 'required' }],
    });
  }
  const config = {
    client_id: input.client_id,
    issuer: input.provider === 'github' ? (input.github_base_url?.replace(/\/+$/, '') ?? null) : (input.issuer ?? preset.issuer),
    scopes: withRequiredScope(input.scopes ?? preset.scopes, input.provider),
    display_name: input.display_name ?? preset.displayName,
  };
  // The configuration it already has: nothing is written (core/patch.ts). The secret is sealed with a
  // fresh IV each time, so a re-sent one is compared with the stored one opened, never logged.
  if (
    row &&
    !differs(config, row.config) &&
    row.enabled === input.enabled &&
    !secretDiffers(deps.box, row.secretSealed, input.client_secret)
  ) {
    return { provider: view(deps, row), created: false };
  }
  row ??= Object.assign(new SocialProvider(), {
    id: newId('spr'),
    workspaceId: scope.workspaceId,
    provider: input.provider,
    createdAt: now,
  });
  row.config = config;
  if (input.client_secret) row.secretSealed = deps.box.seal(input.client_secret);
  row.enabled = input.enabled;
  row.updatedAt = now;
  scope.em.persist(row);
  recordAudit(scope, {
    eventType: 'social_provider.update',
    target: { type: 'social_provider', id: input.provider },
    details: { enabled: row.enabled, client_id: row.config.client_id, issuer: row.config.issuer, secret_changed: !!input.client_secret },
  });
  await scope.em.flush();
  return { provider: view(deps, row), created };
}

export async function listEnabledProviders(deps: AppDeps, em: EntityManager, workspaceId: string, query: PageQuery) {
  const rows = await em.find(SocialProvider, { enabled: true }, { orderBy: { provider: 'asc' } });
  const start = (query.page - 1) * query.per_page;
  const data = rows.slice(start, start + query.per_page).map((row) => ({
    provider: row.provider,
    display_name: row.config.display_name,
    start_url: `${deps.config.BASE_URL}/api/v1/auth/oauth/${row.provider}/start?workspace_id=${workspaceId}`,
  }));
  return toPage(data, rows.length, query);
}

export async function enabledProvider(em: EntityManager, provider: string): Promise<SocialProvider> {
  const row = (SOCIAL_PROVIDERS as readonly string[]).includes(provider)
    ? await em.findOne(SocialProvider, { provider: provider as SocialProviderName, enabled: true }, { populate: ['secretSealed'] })
    : null;
  if (!row) throw new AppError('NOT_FOUND', `Sign-in with ${provider} is not enabled in this workspace`);
  return row;
}

/**
 * Whether the workspace named the server that vouches for emails (a generic OpenID provider, a
 * Microsoft tenant, a GitHub Enterprise host) rather than the provider's own (Google, Microsoft's
 * personal accounts, github.com): whoever configures it may run it.
 */
export function issuerChosenByWorkspace(row: SocialProvider): boolean {
  const preset = PRESETS[row.provider];
  if (preset.oauth) return row.config.issuer !== null;
  return preset.issuer === null || row.config.issuer !== preset.issuer;
}

/** How to reach the provider: discovery for OpenID providers, fixed endpoints for GitHub. */
export function endpointOf(deps: AppDeps, row: SocialProvider): ProviderEndpoint {
  const clientSecret = deps.box.open(row.secretSealed);
  const oauth = PRESETS[row.provider].oauth;
  if (oauth) {
    const base = row.config.issuer;
    return {
      clientId: row.config.client_id,
      clientSecret,
      endpoints: base
        ? { authorization: `${base}/login/oauth/authorize`, token: `${base}/login/oauth/access_token` }
        : { authorization: oauth.authorization, token: oauth.token },
    };
  }
  const preset = PRESETS[row.provider];
  // A preset's own issuer (a workspace may name another, such as a Microsoft tenant): its endpoints are known.
  const issuer = row.config.issuer ?? preset.issuer;
  if (preset.metadata && issuer === preset.issuer) return { clientId: row.config.client_id, clientSecret, metadata: preset.metadata };
  return { clientId: row.config.client_id, clientSecret, issuer: issuer ?? undefined };
}

interface GitHubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

const GITHUB_REMEDY = 'Correct github_base_url in the sign-in settings';

/**
 * What GitHub's API answered: down (5xx, 429, or a 403 that says the rate limit is spent) is
 * `ProviderUnavailable`; 401 or another 403 is the token's refusal; any other answer that is not a
 * JSON 200 (a 404 of a host that is no GitHub, a redirect, an HTML page) is `ProviderMisconfigured`.
 */
async function githubAnswer<T>(res: Response, url: string, issuer: string): Promise<T> {
  const spent = res.status === 403 && res.headers.get('x-ratelimit-remaining') === '0';
  if (res.status >= 500 || res.status === 429 || spent) throw new ProviderUnavailable(new URL(url).origin, res);
  if (res.status === 401 || res.status === 403) throw new AppError('UNAUTHORIZED', 'GitHub did not return the user’s profile');
  const misconfigured = (problem: string, cause?: unknown) =>
    new ProviderMisconfigured(issuer, `its API (${withoutCredentials(url)}) ${problem}`, cause, GITHUB_REMEDY);
  if (res.status !== 200) throw misconfigured(`answered HTTP ${res.status}`);
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw misconfigured('answered something that is not JSON', error);
  }
}

/**
 * GitHub has no id_token: the profile and the primary verified email come from its API (a GitHub
 * Enterprise host the workspace names: public addresses only unless `options.allowPrivate`).
 */
export async function githubIdentity(row: SocialProvider, accessToken: string, options: OutboundPolicy): Promise<ProviderIdentity> {
  const api = row.config.issuer ? `${row.config.issuer}/api/v3` : (PRESETS.github.oauth?.api as string);
  const headers = { authorization: `Bearer ${accessToken}`, accept: 'application/vnd.github+json', 'user-agent': 'identity-service' };
  const get = outboundFetch(options);
  const [userRes, emailsRes] = await askProvider(new URL(api).origin, () =>
    Promise.all([
      get(`${api}/user`, { method: 'GET', headers, signal: AbortSignal.timeout(5000) }),
      get(`${api}/user/emails`, { method: 'GET', headers, signal: AbortSignal.timeout(5000) }),
    ]),
  );
  const issuer = withoutCredentials(row.config.issuer ?? 'https://github.com');
  const user = await githubAnswer<Record<string, unknown>>(userRes, `${api}/user`, issuer);
  const emails = await githubAnswer<GitHubEmail[]>(emailsRes, `${api}/user/emails`, issuer);
  if (!Array.isArray(emails)) {
    throw new ProviderMisconfigured(
      issuer,
      `its API (${withoutCredentials(`${api}/user/emails`)}) answered no list of addresses`,
      undefined,
      GITHUB_REMEDY,
    );
  }
  const primary = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.verified);
  return {
    issuer: row.config.issuer ?? 'https://github.com',
    subject: String(user.id),
    email: primary ? canonicalEmail(primary.email) : null,
    emailVerified: !!primary,
    profile: { ...user, email: primary?.email, name: user.name ?? user.login },
    accessToken,
  };
}
