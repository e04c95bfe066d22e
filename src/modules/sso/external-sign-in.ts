import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import type { Grant } from '../../core/permissions.ts';
import { newId } from '../../core/ids.ts';
import { constantTimeEqual, sha256 } from '../../core/secrets.ts';
import { TENANT_FILTER } from '../../db/tenant.ts';
import type { Origin } from '../auth/sessions.service.ts';
import { signInVerifiedUser, type SignInResult } from '../auth/sign-in.ts';
import { mapProfile } from '../idp-attributes/idp-attributes.ts';
import { addAssignment } from '../roles/builtin-roles.ts';
import { permissionsBeyond } from '../roles/owners.ts';
import { Role } from '../roles/role.entity.ts';
import { User } from '../users/user.entity.ts';
import type { Organization } from '../organizations/organization.entity.ts';
import { joinOrganization } from '../organizations/organizations.service.ts';
import { emitEvent } from '../events/events.ts';
import { Application } from '../applications/application.entity.ts';
import { canonicalEmail } from '../../core/addresses.ts';
import { providerName } from '../users/names.ts';
import { retireInvitationsOf } from '../invitations/retire.ts';

/** From the redirect to the identity provider until its callback. */
export const FLOW_TTL_MS = 10 * 60 * 1000;
/** The one-time code handed to the app after the callback, swapped at `POST /auth/oauth/exchange`. */
export const CODE_TTL_MS = 60 * 1000;

export type ExternalKind = 'social' | 'sso';

/** What the callback needs to finish the flow; sealed at rest (it holds the PKCE verifier). */
export interface FlowState {
  codeVerifier?: string;
  nonce?: string | null;
  /** The social provider name, or the organization id for SSO. */
  source: string;
  /** SAML: the AuthnRequest id the response must answer. */
  requestId?: string;
  /** The app's own `state`, handed back on its redirect with the result. */
  appState?: string;
  /** The app's PKCE `code_challenge` (S256): the exchange then needs the matching `code_verifier`. */
  appCodeChallenge?: string;
}

export interface StartedFlow {
  id: string;
  state: string;
}

function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Where the one-time code may be sent: the service's own pages (BASE_URL's origin), or exactly one of
 * the redirect URIs registered on an application of the workspace. Anything else would hand the code
 * to a stranger.
 */
export async function checkRedirectUri(deps: AppDeps, em: EntityManager, redirectUri: string | undefined): Promise<string> {
  const target = redirectUri ?? `${deps.config.BASE_URL}/login/callback`;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new AppError('BAD_REQUEST', 'redirect_uri must be an absolute URL', {
      details: [{ path: 'redirect_uri', message: 'must be a URL' }],
    });
  }
  if (url.hash)
    throw new AppError('BAD_REQUEST', 'redirect_uri must not have a fragment', {
      details: [{ path: 'redirect_uri', message: 'has a fragment' }],
    });
  if (url.origin === new URL(deps.config.BASE_URL).origin) return url.href;
  const registered = await em.find(Application, {}, { fields: ['redirectUris'] });
  if (registered.some((app) => app.redirectUris.includes(target))) return target;
  throw new AppError(
    'BAD_REQUEST',
    'redirect_uri must be a page of this service or a redirect URI registered on one of the workspace’s applications',
    {
      details: [{ path: 'redirect_uri', message: 'not an allowed redirect URI' }],
    },
  );
}

/** Records a flow before redirecting to the provider; the state is random and only its hash is kept. */
export async function startFlow(
  deps: AppDeps,
  em: EntityManager,
  input: { workspaceId: string; kind: ExternalKind; redirectUri: string; flow: FlowState; state?: string },
): Promise<StartedFlow> {
  const state = input.state ?? randomToken();
  const id = newId('xsi');
  const now = deps.clock.now();
  await em.execute(
    `insert into external_sign_ins (id, workspace_id, kind, source, state_hash, flow_sealed, redirect_uri, expires_at, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      id,
      input.workspaceId,
      input.kind,
      input.flow.source,
      sha256(state),
      deps.box.seal(JSON.stringify(input.flow)),
      input.redirectUri,
      new Date(now.getTime() + FLOW_TTL_MS),
      now,
    ],
  );
  return { id, state };
}

export interface CalledBackFlow {
  id: string;
  workspaceId: string;
  kind: ExternalKind;
  redirectUri: string;
  flow: FlowState;
}

/**
 * The callback's state, consumed in one conditional update: an unknown, expired or already used
 * state (a replayed callback) is refused, and two concurrent callbacks cannot both proceed.
 */
export async function consumeState(deps: AppDeps, em: EntityManager, state: string, kind: ExternalKind): Promise<CalledBackFlow> {
  const now = deps.clock.now();
  const [row] = await em.execute<{ id: string; workspace_id: string; kind: ExternalKind; redirect_uri: string; flow_sealed: string }[]>(
    `update external_sign_ins set called_back_at = ?
      where state_hash = ? and kind = ? and called_back_at is null and expires_at > ?
      returning id, workspace_id, kind, redirect_uri, flow_sealed`,
    [now, sha256(state), kind, now],
  );
  if (!row)
    throw new AppError('INVALID_TOKEN', 'This sign-in is unknown, expired or already completed; start again', { keepChanges: true });
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    redirectUri: row.redirect_uri,
    flow: JSON.parse(deps.box.open(row.flow_sealed)) as FlowState,
  };
}

/** RFC 7636 S256: the base64url SHA-256 of the verifier. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * Where the app's page learns how the flow ended: `?code=` to exchange, or an OAuth-style `?error=`,
 * followed by the app's own `state` when it sent one.
 */
export function resultRedirect(redirectUri: string, params: Record<string, string>, appState?: string): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  if (appState !== undefined) url.searchParams.set('state', appState);
  return url.href;
}

/** The OAuth errors (RFC 6749 §4.1.2.1) an identity provider's refusal reaches the app as. */
export type RefusalError = 'access_denied' | 'temporarily_unavailable' | 'server_error';

const REFUSALS: Record<RefusalError, string> = {
  access_denied: 'The sign-in was cancelled or refused at the identity provider',
  temporarily_unavailable: 'The identity provider is temporarily unavailable; try again later',
  server_error: 'The identity provider could not complete the sign-in',
};

/** An OAuth error code as RFC 6749 spells them (printable ASCII without `"` and `\`), bounded. */
const ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

/**
 * The authorization endpoint's errors (RFC 6749 §4.1.2.1) that blame the request this service sent,
 * that is the workspace's settings or the client's registration at the provider, not the person: no
 * retry or other account mends them.
 */
const CONFIGURATION_ERRORS = new Set(['unauthorized_client', 'invalid_scope', 'unsupported_response_type']);

/**
 * The identity provider answered the callback with an OAuth error instead of a code: the user
 * cancelled, or the provider refused. The app hears that error (`access_denied` for any the app has no
 * use for; `server_error` for one that says the sign-in's configuration is wrong, `misconfigured`),
 * never that the answer "could not be verified".
 */
export class ProviderRefusal extends AppError {
  readonly oauthError: RefusalError;
  /** What the provider said, for the audit row (undefined when it is no well-formed error code). */
  readonly providerError: string | undefined;
  /** The provider refused the request this service sent (its client or scopes), not the person. */
  readonly misconfigured: boolean;

  constructor(providerError: string) {
    const misconfigured = CONFIGURATION_ERRORS.has(providerError);
    const oauthError = misconfigured
      ? 'server_error'
      : Object.hasOwn(REFUSALS, providerError)
        ? (providerError as RefusalError)
        : 'access_denied';
    const known = ERROR_CODE.test(providerError) ? providerError : undefined;
    const message = misconfigured
      ? `The identity provider refused this service's sign-in request (${providerError}): correct the client ID, its scopes or its registration at the provider`
      : oauthError === providerError
        ? REFUSALS[oauthError]
        : `The identity provider refused the sign-in (${known ?? 'an unknown error'})`;
    super('FORBIDDEN', message);
    this.oauthError = oauthError;
    this.providerError = known;
    this.misconfigured = misconfigured;
  }
}

/** A provider's own id of a user: what a returning user is recognised by (`user_identities`). */
export interface ProviderSubject {
  /** The social provider's name (google, github, microsoft, oidc). */
  provider: string;
  issuer: string;
  subject: string;
}

export interface ExternalIdentity {
  email: string;
  /** The provider vouches for the address (social: `email_verified`; SSO: the organization owns the domain). */
  emailVerified: boolean;
  profile: Record<string, unknown>;
  /** For audit rows: which provider or organization. */
  via: string;
  /** Social sign-in: the provider's subject, looked up before the email and linked to the account. */
  subject?: ProviderSubject;
}

export interface Provisioning {
  /** Create the user when no account has this email. */
  create: boolean;
  /** The role a created user gets. */
  roleKey: string;
  /**
   * The issuer was chosen by the workspace (not a provider's own): an existing account is linked by
   * its email only when `roleKey` covers its rights (see `refuseAccountAboveRole`).
   */
  issuerChosenByWorkspace?: boolean;
}

function displayName(mapped: Record<string, unknown>): string | null {
  const whole = typeof mapped.name === 'string' ? providerName(mapped.name) : null;
  if (whole) return whole;
  const parts = [mapped.first_name, mapped.last_name].filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return parts.length ? providerName(parts.join(' ')) : null;
}

/** The account a provider's subject was linked to, if any. */
async function linkedUser(em: EntityManager, workspaceId: string, subject: ProviderSubject): Promise<User | null> {
  const [row] = await em.execute<{ user_id: string }[]>(
    'select user_id from user_identities where workspace_id = ? and issuer = ? and subject = ?',
    [workspaceId, subject.issuer, subject.subject],
  );
  return row ? em.findOne(User, { id: row.user_id }) : null;
}

/** Links a provider's subject to an account; a link that exists already (a concurrent sign-in) stays. */
async function linkSubject(em: EntityManager, workspaceId: string, userId: string, subject: ProviderSubject, now: Date): Promise<void> {
  await em.execute(
    `insert into user_identities (id, workspace_id, user_id, provider, issuer, subject, created_at) values (?, ?, ?, ?, ?, ?, ?)
     on conflict (workspace_id, issuer, subject) do nothing`,
    [newId('idn'), workspaceId, userId, subject.provider, subject.issuer, subject.subject, now],
  );
}

/** A subject worth keeping: both parts known (an OAuth provider without an id_token has no `sub`). */
function usableSubject(subject: ProviderSubject | undefined): ProviderSubject | undefined {
  return subject?.issuer && subject.subject ? subject : undefined;
}

/**
 * The account an external identity signs in to: first the one its provider subject is linked to
 * (it created that account, or was linked to it before), then the account with its email. An
 * existing account is linked by email only when the provider vouches for the email (an unverified
 * address would let anyone claim someone's account). Enabled identity-provider attributes are
 * written onto the user's metadata.
 */
export async function resolveUser(scope: AuditScope, identity: ExternalIdentity, provisioning: Provisioning, now: Date): Promise<User> {
  const { em } = scope;
  em.setFilterParams(TENANT_FILTER, { workspaceId: scope.workspaceId });
  const mapped = await mapProfile(em, identity.profile);
  const subject = usableSubject(identity.subject);
  const linked = subject ? await linkedUser(em, scope.workspaceId, subject) : null;
  let user = linked ?? (await em.findOne(User, { email: identity.email }));
  const before = user && profileOf(user);
  if (user) {
    if (!linked && !identity.emailVerified) {
      throw new AppError(
        'FORBIDDEN',
        'The identity provider has not verified this email address, so it cannot sign in to an existing account',
      );
    }
    if (!linked && provisioning.issuerChosenByWorkspace) {
      await refuseAccountAboveRole(
        em,
        scope.workspaceId,
        provisioning.roleKey,
        user.email,
        now,
        (keys) =>
          `This sign-in provider cannot sign in to this account: it holds rights a new account of the provider does not get (${keys}); sign in with its password`,
      );
    }
  } else {
    if (!provisioning.create) throw new AppError('FORBIDDEN', 'No account exists for this email and automatic account creation is off');
    const role = await em.findOne(Role, { key: provisioning.roleKey });
    if (!role) throw new AppError('CONFLICT', `The role "${provisioning.roleKey}" given to new users no longer exists`);
    user = Object.assign(new User(), {
      id: newId('usr'),
      workspaceId: scope.workspaceId,
      email: identity.email,
      name: null,
      status: 'active',
      passwordHash: null,
      createdAt: now,
      updatedAt: now,
      lastSignInAt: null,
      failedLoginCount: 0,
      lockedUntil: null,
      emailVerified: identity.emailVerified,
      metadata: {},
    });
    em.persist(user);
    addAssignment(em, scope.workspaceId, user.id, role.id);
    await retireInvitationsOf(scope, user.email, user.id, now);
    recordAudit(scope, {
      eventType: 'user.create',
      target: { type: 'user', id: user.id },
      details: { email: user.email, via: identity.via, role: role.key, role_id: role.id },
    });
    emitEvent(scope, 'user.created', { id: user.id, email: user.email, via: identity.via, role: role.key, role_id: role.id });
  }
  if (Object.keys(mapped).length > 0) user.metadata = { ...user.metadata, ...mapped };
  user.name ??= displayName(mapped);
  // A subject found by its link may now show another address than the account's: that one proves nothing.
  if (identity.emailVerified && identity.email === user.email) user.emailVerified = true;
  user.updatedAt = now;
  // An account that signs in again with a new name, attributes or a verified address changed as an
  // admin's PATCH changes it: subscribers hear of it the same way.
  const changes = before ? profileChanges(before, profileOf(user)) : [];
  if (changes.length > 0) emitEvent(scope, 'user.updated', { id: user.id, email: user.email, changes });
  await em.flush();
  if (subject && !linked) await linkSubject(em, scope.workspaceId, user.id, subject, now);
  return user;
}

/** What a sign-in with an outside identity may change on an account. */
interface Profile {
  name: string | null;
  email_verified: boolean;
  metadata: string;
}

function profileOf(user: User): Profile {
  return { name: user.name, email_verified: user.emailVerified, metadata: JSON.stringify(user.metadata) };
}

/** The members of `after` that differ from `before`, named as `PATCH /users/{id}` names them. */
function profileChanges(before: Profile, after: Profile): (keyof Profile)[] {
  return (Object.keys(before) as (keyof Profile)[]).filter((key) => before[key] !== after[key]);
}

/** After the callback: a one-time code for the user, which the app swaps for the sign-in body. */
export async function issueCode(deps: AppDeps, em: EntityManager, flowId: string, userId: string): Promise<string> {
  const code = randomToken();
  const now = deps.clock.now();
  await em.execute(`update external_sign_ins set user_id = ?, code_hash = ?, code_expires_at = ? where id = ?`, [
    userId,
    sha256(code),
    new Date(now.getTime() + CODE_TTL_MS),
    flowId,
  ]);
  return code;
}

/**
 * `POST /auth/oauth/exchange`: the code (single use, 60 seconds) becomes what a password sign-in
 * answers — tokens, or the second-factor challenge when the user has a verified factor. Account
 * state is checked here, at the last moment. No transaction is opened, as for a password sign-in:
 * the code is consumed by one statement, committed before the post-login actions run (holding no
 * connection while the sandbox works), and every later write is atomic on its own (auth/sign-in.ts).
 * A refused sign-in leaves the code spent, as it did when the refusal committed with the consumption.
 */
export async function exchangeCode(
  deps: AppDeps,
  em: EntityManager,
  input: { code: string; codeVerifier?: string },
  origin: Origin,
  namedWorkspaceId: string | null,
): Promise<SignInResult> {
  const now = deps.clock.now();
  // A code presented with another workspace's X-Tenant-ID names nothing there, and is not consumed.
  const [row] = await em.execute<{ workspace_id: string; user_id: string; kind: ExternalKind; source: string; flow_sealed: string }[]>(
    `update external_sign_ins set exchanged_at = ?
      where code_hash = ? and exchanged_at is null and code_expires_at > ? and user_id is not null
        ${namedWorkspaceId ? 'and workspace_id = ?' : ''}
      returning workspace_id, user_id, kind, source, flow_sealed`,
    [now, sha256(input.code), now, ...(namedWorkspaceId ? [namedWorkspaceId] : [])],
  );
  if (!row) throw new AppError('INVALID_TOKEN', 'This sign-in code is unknown, expired or already used');
  // Checked after the code is consumed: a wrong verifier spends the code (RFC 7636 §4.6), so it cannot be guessed at.
  const { appCodeChallenge } = JSON.parse(deps.box.open(row.flow_sealed)) as FlowState;
  // A verifier for a sign-in started without a challenge is refused too (RFC 9700 §2.1.1): its starter
  // bound nothing, so the verifier is not theirs. An app that binds its codes is then never handed one
  // that an attacker started unbound (a login CSRF through a downgrade).
  if (appCodeChallenge === undefined && input.codeVerifier !== undefined) {
    throw new AppError('INVALID_TOKEN', 'A code_verifier was sent for a sign-in started without a code_challenge', {
      keepChanges: true,
    });
  }
  if (appCodeChallenge !== undefined) {
    const verifier = input.codeVerifier;
    if (verifier === undefined || !constantTimeEqual(pkceChallenge(verifier), appCodeChallenge)) {
      throw new AppError('INVALID_TOKEN', 'The code_verifier does not match the code_challenge this sign-in started with', {
        keepChanges: true,
      });
    }
  }
  em.setFilterParams(TENANT_FILTER, { workspaceId: row.workspace_id });
  return signInVerifiedUser(deps, em, { workspaceId: row.workspace_id, userId: row.user_id, method: row.kind, origin });
}

/**
 * Nobody verifies that an organization owns the domains it names, nor who runs the issuer a workspace
 * names for a social provider (a generic OIDC server, a Microsoft tenant, a GitHub Enterprise host), so
 * whoever may write organizations could connect an identity provider of their own and assert anyone's
 * address. Such a provider therefore signs in to an existing account only when `roleKey` (the role it
 * gives new users) already covers every right the account holds: never an owner's, never an admin's
 * through a lesser role. Such an account signs in with its password; the refusal is the callback's
 * `access_denied`. `refusal` names who is refused, for the message.
 */
async function refuseAccountAboveRole(
  em: EntityManager,
  workspaceId: string,
  roleKey: string,
  email: string,
  now: Date,
  refusal: (keys: string) => string,
) {
  const held = await em.execute<{ key: string; permissions: Grant[] }[]>(
    `select r.key, r.permissions from users u
       join role_assignments ra on ra.user_id = u.id and (ra.expires_at is null or ra.expires_at > ?)
       join roles r on r.id = ra.role_id
      where u.workspace_id = ? and u.email = ?`,
    [now, workspaceId, email],
  );
  if (held.length === 0) return;
  const [given] = await em.execute<{ permissions: Grant[] }[]>('select permissions from roles where workspace_id = ? and key = ?', [
    workspaceId,
    roleKey,
  ]);
  const covered = given?.permissions ?? [];
  const beyond = held.filter((role) => role.key === 'owner' || permissionsBeyond(covered, role.permissions).length > 0);
  if (beyond.length > 0) throw new AppError('FORBIDDEN', refusal(beyond.map((r) => r.key).join(', ')));
}

/**
 * An organization's identity provider speaks for its own domains only: an email outside them is
 * refused, one inside is trusted as verified, signed in (or created, when just-in-time provisioning
 * is on) and made a member of the organization.
 */
export async function ssoUser(
  deps: AppDeps,
  scope: AuditScope,
  org: Organization,
  email: string | null,
  profile: Record<string, unknown>,
): Promise<string> {
  const domains = (
    await scope.em.execute<{ domain: string }[]>('select domain from organization_domains where organization_id = ?', [org.id])
  ).map((d) => d.domain);
  const address = email === null ? '' : canonicalEmail(email);
  if (!domains.includes(address.split('@').pop() ?? '')) {
    throw new AppError('FORBIDDEN', 'The identity provider asserted an email outside the organization’s domains');
  }
  const now = deps.clock.now();
  await refuseAccountAboveRole(
    scope.em,
    scope.workspaceId,
    org.sso.default_role,
    address,
    now,
    (keys) =>
      `SSO cannot sign in to this account: it holds rights the organization's SSO does not give (${keys}); sign in with its password`,
  );
  const user = await resolveUser(
    scope,
    { email: address, emailVerified: true, profile, via: org.id },
    { create: org.sso.jit_provisioning, roleKey: org.sso.default_role },
    now,
  );
  await joinOrganization(scope.em, scope.workspaceId, org.id, user.id, now);
  return user.id;
}
