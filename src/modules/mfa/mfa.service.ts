import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps, OncePerCall } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { User } from '../users/user.entity.ts';
import { accountLocked } from '../users/account-locked.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { MfaChallenge, MfaFactor } from './mfa.entity.ts';
import { rateLimitedError } from '../../core/rate-limit.ts';
import { consumeRecordingFirstRefusal } from '../../core/rate-limited-attempts.ts';
import { TENANT_FILTER } from '../../db/tenant.ts';
import { CHALLENGE_ANSWERED, startSession, type Origin } from '../auth/sessions.service.ts';
import { totpCode, type ChallengeView, type FactorView } from './mfa.schema.ts';
import { matchingStep, newTotpSecret, qrCodeDataUri, spendStep, totpUri } from './totp.ts';
import { emitEvent } from '../events/events.ts';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

function toView(factor: MfaFactor): FactorView {
  return {
    id: factor.id,
    name: factor.name,
    kind: factor.kind,
    status: factor.status,
    created_at: factor.createdAt.toISOString(),
    verified_at: factor.verifiedAt?.toISOString() ?? null,
  };
}

/** A user's factors, a page at a time, by id. */
export async function listFactors(em: EntityManager, userId: string, query: PageQuery) {
  const [factors, total] = await em.findAndCount(MfaFactor, { userId }, { orderBy: { id: 'asc' }, ...offsetOf(query) });
  return toPage(factors.map(toView), total, query);
}

/**
 * How many factors a user may hold: at most `pending` waiting for their code, at most `total` in all.
 * Enrolling past either replaces the oldest pending one (an app set up and abandoned never stands in
 * the way of another try); only an account whose factors are all verified and at `total` is refused.
 */
export const FACTOR_LIMITS = { pending: 5, total: 20 } as const;

/**
 * A user's factors change one call at a time (enrolling, verifying, removing): the user's row is held
 * until commit. So concurrent enrollments count one after the other, and an enrollment never replaces
 * a pending factor that a verification has made `Verified` meanwhile.
 */
async function holdFactors(em: EntityManager, userId: string): Promise<void> {
  await em.execute('select id from users where id = ? for update', [userId]);
}

/**
 * The factors a new enrollment of `userId` pushes out, oldest first: as few pending ones as bring the
 * user back under both limits with the new one. Refuses (409) when no pending one is left to go.
 */
async function factorsToReplace(em: EntityManager, userId: string): Promise<MfaFactor[]> {
  await holdFactors(em, userId);
  const factors = await em.find(MfaFactor, { userId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
  const pending = factors.filter((factor) => factor.status === 'Pending verification');
  const excess = Math.max(pending.length - (FACTOR_LIMITS.pending - 1), factors.length - (FACTOR_LIMITS.total - 1), 0);
  if (excess > pending.length) {
    const verified = factors.length - pending.length;
    throw new AppError('CONFLICT', `This account has ${verified} verified factors, the most it may have; remove one first`);
  }
  return pending.slice(0, excess);
}

/**
 * A new authenticator, `Pending verification` until a code from it is confirmed; the oldest pending
 * ones go when the user's limits (`FACTOR_LIMITS`) need the room, each recorded as a removal.
 */
export async function enrollTotp(deps: AppDeps, scope: AuditScope, userId: string, name: string, now: Date) {
  const user = await scope.em.findOneOrFail(User, { id: userId });
  const workspace = await scope.em.findOneOrFail(Workspace, { id: user.workspaceId });
  const replaced = await factorsToReplace(scope.em, userId);
  const secret = newTotpSecret();
  const factor = Object.assign(new MfaFactor(), {
    id: newId('fac'),
    workspaceId: user.workspaceId,
    userId,
    name,
    kind: 'totp' as const,
    status: 'Pending verification' as const,
    secret: deps.box.seal(secret),
    createdAt: now,
    verifiedAt: null,
  });
  for (const old of replaced) dropFactor(scope, old, { replaced_by: factor.id });
  scope.em.persist(factor);
  recordAudit(scope, { eventType: 'mfa.factor_enroll', target: { type: 'factor', id: factor.id }, details: { kind: 'totp', name } });
  const uri = totpUri(workspace.name, user.email, secret);
  return { factor: toView(factor), secret, otpauth_uri: uri, qr_code_data_uri: await qrCodeDataUri(uri) };
}

async function ownFactor(em: EntityManager, userId: string, id: string): Promise<MfaFactor> {
  const factor = isId('fac', id) ? await em.findOne(MfaFactor, { id, userId }, { populate: ['secret'] }) : null;
  if (!factor) throw new AppError('NOT_FOUND', 'No such factor');
  return factor;
}

/** Checks a code against the factors' secrets and spends its time step on the factor it matched. */
async function acceptCode(deps: AppDeps, em: EntityManager, factors: MfaFactor[], code: string, now: Date): Promise<boolean> {
  for (const factor of factors) {
    const step = await matchingStep(deps.box.open(factor.secret), code, now);
    if (step !== null && (await spendStep(em, factor.id, step))) return true;
  }
  return false;
}

export async function verifyFactor(
  deps: AppDeps,
  scope: AuditScope,
  userId: string,
  id: string,
  code: string,
  now: Date,
): Promise<FactorView> {
  await holdFactors(scope.em, userId);
  const factor = await ownFactor(scope.em, userId, id);
  if (factor.status === 'Verified') throw new AppError('CONFLICT', 'This factor is already verified');
  if (!(await acceptCode(deps, scope.em, [factor], code, now))) {
    recordAudit(scope, {
      eventType: 'mfa.factor_verify',
      outcome: 'failure',
      target: { type: 'factor', id: factor.id },
      details: { reason: 'wrong_code' },
    });
    throw new AppError('INVALID_CODE', 'The code is not correct, or was already used', { keepChanges: true });
  }
  Object.assign(factor, { status: 'Verified', verifiedAt: now });
  recordAudit(scope, { eventType: 'mfa.factor_verify', target: { type: 'factor', id: factor.id } });
  emitEvent(scope, 'mfa.factor_enrolled', { user_id: factor.userId, factor_id: factor.id, kind: factor.kind, name: factor.name });
  return toView(factor);
}

export async function removeFactor(scope: AuditScope, userId: string, id: string) {
  await holdFactors(scope.em, userId);
  const factor = await ownFactor(scope.em, userId, id);
  dropFactor(scope, factor);
  return { id: factor.id, deleted: true as const };
}

/** Deletes `factor`, recorded as `mfa.factor_remove` (with `details` added), and told if it was verified. */
function dropFactor(scope: AuditScope, factor: MfaFactor, details: Record<string, unknown> = {}) {
  scope.em.remove(factor);
  recordAudit(scope, {
    eventType: 'mfa.factor_remove',
    target: { type: 'factor', id: factor.id },
    details: { name: factor.name, status: factor.status, ...details },
  });
  // The pair of mfa.factor_enrolled, which a factor's verification emits: a factor never verified was
  // never enrolled, so its removal tells subscribers nothing.
  if (factor.status === 'Verified') {
    emitEvent(scope, 'mfa.factor_removed', { user_id: factor.userId, factor_id: factor.id, kind: factor.kind, name: factor.name });
  }
}

/**
 * A challenge in place of tokens: its `mfa_token` is shown once and stored as a hash. `claims` (from
 * actions) go into the access token once it is answered.
 */
export function issueChallenge(
  em: EntityManager,
  workspaceId: string,
  userId: string,
  now: Date,
  claims: Record<string, unknown> | null = null,
): ChallengeView {
  const token = newSecret('mfa_');
  const challenge = Object.assign(new MfaChallenge(), {
    id: newId('chl'),
    workspaceId,
    userId,
    tokenHash: sha256(token),
    createdAt: now,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
    usedAt: null,
    claims,
  });
  em.persist(challenge);
  return { mfa_required: true, mfa_token: token, available_factors: ['totp'], challenge_id: challenge.id };
}

/**
 * An account deactivated or locked since its password was checked gets no tokens from the code: the
 * same refusals as at sign-in, audited and kept.
 */
async function refuseIfBarred(em: EntityManager, scope: AuditScope, userId: string, now: Date): Promise<void> {
  const user = await em.findOne(User, { id: userId }, { filters: false });
  const deactivated = !user || user.status === 'deactivated';
  const locked = user?.status === 'locked' && (!user.lockedUntil || user.lockedUntil > now);
  if (!deactivated && !locked) return;
  recordAudit(scope, {
    eventType: 'auth.mfa_verify',
    outcome: 'failure',
    target: { type: 'user', id: userId },
    details: { reason: deactivated ? 'account_deactivated' : 'account_locked' },
  });
  throw deactivated
    ? new AppError('ACCOUNT_DEACTIVATED', 'This account has been deactivated', { keepChanges: true })
    : accountLocked(user?.lockedUntil ?? null);
}

/** The live challenge an `mfa_token` names (in `workspaceId` when one is named), or null (expired, used or unknown). */
function liveChallenge(em: EntityManager, token: string, now: Date, workspaceId: string | null): Promise<MfaChallenge | null> {
  return em.findOne(
    MfaChallenge,
    { tokenHash: sha256(token), usedAt: null, expiresAt: { $gt: now }, ...(workspaceId ? { workspaceId } : {}) },
    { filters: false },
  );
}

/**
 * The refusal of a token that names no live challenge. A used or expired one still names its user,
 * so the attempt is audited (and kept); an unknown one names nobody.
 */
async function refuseDeadChallenge(em: EntityManager, token: string, origin: Origin, workspaceId: string | null): Promise<AppError> {
  const dead = await em.findOne(MfaChallenge, { tokenHash: sha256(token), ...(workspaceId ? { workspaceId } : {}) }, { filters: false });
  if (dead) {
    recordAudit(
      { em, workspaceId: dead.workspaceId, actor: { type: 'user', id: dead.userId }, ...origin },
      {
        eventType: 'auth.mfa_verify',
        outcome: 'failure',
        target: { type: 'user', id: dead.userId },
        details: { reason: dead.usedAt ? 'token_used' : 'token_expired', challenge_id: dead.id },
      },
    );
  }
  return new AppError('INVALID_TOKEN', 'The sign-in challenge is invalid, expired or already used', { keepChanges: dead !== null });
}

const malformedCode = () =>
  new AppError('BAD_REQUEST', 'The request is invalid', { details: [{ path: 'code', message: 'must be six digits' }], keepChanges: true });

/**
 * Answers a challenge with a code from any verified factor of its user. The code's step is spent and
 * the challenge consumed atomically, so of two requests with one token and one code, one wins.
 */
export async function answerChallenge(deps: AppDeps, scope: AuditScope, challenge: MfaChallenge, code: string, now: Date): Promise<void> {
  const factors = await scope.em.find(
    MfaFactor,
    { userId: challenge.userId, status: 'Verified' },
    { populate: ['secret'], filters: false },
  );
  const fail = (reason: string): never => {
    recordAudit(scope, {
      eventType: 'auth.mfa_verify',
      outcome: 'failure',
      target: { type: 'user', id: challenge.userId },
      details: { reason },
    });
    throw new AppError('INVALID_CODE', 'The code is not correct, or was already used', { keepChanges: true });
  };
  if (!(await acceptCode(deps, scope.em, factors, code, now))) fail('wrong_code');
  const consumed = await scope.em.execute<{ id: string }[]>(
    'update mfa_challenges set used_at = ? where id = ? and used_at is null and expires_at > ? returning id',
    [now, challenge.id, now],
  );
  if (consumed.length === 0) throw new AppError('INVALID_TOKEN', 'The sign-in challenge is invalid, expired or already used');
  recordAudit(scope, {
    eventType: 'auth.mfa_verify',
    target: { type: 'user', id: challenge.userId },
    details: { challenge_id: challenge.id },
  });
}

/**
 * The challenge its token names, counted against its user's limit (5 per 5 minutes, across tokens
 * and addresses, malformed codes included; once per call when its transaction is run again: `once`),
 * and answered. Answers the challenge it consumed. A code that is not six digits is BAD_REQUEST
 * whatever the token (counted when the token is live). A `challengeId` sent with the token must name
 * the same challenge (else INVALID_TOKEN, nothing spent).
 */
export async function passSignInChallenge(
  deps: AppDeps,
  em: EntityManager,
  mfaToken: string,
  code: unknown,
  origin: Origin,
  workspaceId: string | null = null,
  challengeId?: string,
  once?: OncePerCall,
): Promise<MfaChallenge> {
  const now = deps.clock.now();
  const parsed = totpCode.safeParse(code);
  const challenge = await liveChallenge(em, mfaToken, now, workspaceId);
  if (!challenge && !parsed.success) throw malformedCode();
  if (!challenge) throw await refuseDeadChallenge(em, mfaToken, origin, workspaceId);
  if (challengeId !== undefined && challengeId !== challenge.id) {
    throw new AppError('INVALID_TOKEN', 'The mfa_token and challenge_id name different sign-in challenges');
  }
  em.setFilterParams(TENANT_FILTER, { workspaceId: challenge.workspaceId });
  const scope: AuditScope = { em, workspaceId: challenge.workspaceId, actor: { type: 'user', id: challenge.userId }, ...origin };
  const decision = await consumeRecordingFirstRefusal(
    deps,
    `user:${challenge.userId}`,
    { workspaceId: challenge.workspaceId, eventType: 'auth.mfa_verify', limit: 'mfaVerify', origin },
    em,
    once,
  );
  // Nothing else was written yet: keeping the changes commits the first refusal's audit row, if any.
  if (!decision.allowed) throw rateLimitedError(decision, { keepChanges: true });
  if (!parsed.success) {
    recordAudit(scope, {
      eventType: 'auth.mfa_verify',
      outcome: 'failure',
      target: { type: 'user', id: challenge.userId },
      details: { reason: 'malformed_code' },
    });
    throw malformedCode();
  }
  await refuseIfBarred(em, scope, challenge.userId, now);
  await answerChallenge(deps, scope, challenge, parsed.data, now);
  return challenge;
}

/** `POST /auth/mfa/verify`: the challenge passed, and a session. */
export async function completeSignInChallenge(
  deps: AppDeps,
  em: EntityManager,
  mfaToken: string,
  code: unknown,
  origin: Origin,
  workspaceId: string | null = null,
  challengeId?: string,
  once?: OncePerCall,
) {
  const challenge = await passSignInChallenge(deps, em, mfaToken, code, origin, workspaceId, challengeId, once);
  return startSession(deps, em, { userId: challenge.userId, method: CHALLENGE_ANSWERED, claims: challenge.claims }, origin);
}
