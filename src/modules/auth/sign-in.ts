import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { hashPassword, needsRehash, verifyPassword } from '../../core/passwords.ts';
import { runStatementIn, type Statement } from '../../core/sql.ts';
import type { UserStatus } from '../users/user.entity.ts';
import { accountLocked } from '../users/account-locked.ts';
import type { ChallengeView } from '../mfa/mfa.schema.ts';
import { secondFactorStage } from '../mfa/sign-in-stage.ts';
import { scoreAttempt } from '../threat/risk.ts';
import { riskStage } from '../threat/risk-stage.ts';
import { actionsStage } from '../actions/sign-in-stage.ts';
import { emitEvent } from '../events/events.ts';
import type { TokensView } from './auth.schema.ts';
import { CHALLENGE_ANSWERED, startSession, type Origin } from './sessions.service.ts';
import { countFailure, expireLock } from './lockout.ts';

const WRONG = 'The provided credentials are incorrect';

/** A hash of nothing anyone knows: unknown emails are checked against it, so they take as long. */
let dummyHash: Promise<string> | null = null;
function dummy(): Promise<string> {
  dummyHash ??= hashPassword('dummy password that matches nothing');
  return dummyHash;
}

export interface SignInAttempt {
  workspaceId: string;
  email: string;
  password: string;
  origin: Origin;
  /** How the user proved who they are, for the session's audit row; `password` unless said. */
  method?: string;
}

/** The account being signed in to, as the password stage read it. */
export interface SignInUser {
  id: string;
  email: string;
  status: UserStatus;
  passwordHash: string | null;
  lockedUntil: Date | null;
  /** Read with the user, so the second-factor stage needs no query of its own. */
  hasVerifiedFactor: boolean;
  /** The password matched its stored hash only as typed, not normalised: a new hash is stored at sign-in. */
  legacyPasswordForm?: boolean;
}

/** What a stage can read and what it has learned so far. */
export interface SignInRun {
  deps: AppDeps;
  em: EntityManager;
  attempt: SignInAttempt;
  now: Date;
  /** Set by the password stage; every later stage can rely on it. */
  user: SignInUser;
  /** Custom claims for the access token, from the workspace's actions (kept on a challenge and the session). */
  claims?: Record<string, unknown>;
  /**
   * Whether the workspace has deployed post-login actions, when the password stage read it with the
   * user (the actions stage then needs no query to learn there are none).
   */
  liveActions?: boolean;
  /** The attempt's stored risk row, once the risk stage allowed it (a later refusal marks it a failure). */
  riskScoreId?: string;
}

/** The account, and whether the workspace runs post-login actions (from `actions_live_index`). */
const USER_BY_EMAIL: Statement = {
  name: 'auth_login_user',
  text: `select u.id, u.email, u.status, u.password_hash, u.locked_until,
                exists (select 1 from mfa_factors f where f.user_id = u.id and f.status = 'Verified') as has_factor,
                exists (select 1 from actions a where a.workspace_id = $1 and a.trigger = 'post-login'
                          and a.deployed_code is not null) as live_actions
           from users u where u.workspace_id = $1 and u.email = $2`,
};

export type SignInChallenge = { kind: 'challenge'; challenge: ChallengeView };
export type SignInResult = { kind: 'tokens'; tokens: TokensView } | SignInChallenge;

/** A stage may stop the sign-in with a second-factor challenge, or throw to refuse it. */
export type SignInStage = (run: SignInRun) => Promise<SignInChallenge | undefined>;

/**
 * What a sign-in that passed every stage ends with: a session and tokens for the API, a finished
 * login for the hosted OAuth sign-in (whose sessions the authorization server keeps).
 */
export type SignInFinish<T> = (run: SignInRun) => Promise<T>;

function scope(run: Pick<SignInRun, 'em' | 'attempt'>, user: SignInUser | null): AuditScope {
  return {
    em: run.em,
    workspaceId: run.attempt.workspaceId,
    actor: user ? { type: 'user', id: user.id } : { type: 'system', id: null },
    ...run.attempt.origin,
  };
}

/**
 * Records a refusal and answers the error to throw: the attempt is scored and stored as a failure
 * (threat detection reads it for later attempts from this IP and on this account) and audited; both
 * are kept although the request fails (`keepChanges`).
 */
async function refusal(
  run: Pick<SignInRun, 'em' | 'attempt' | 'now'>,
  user: SignInUser | null,
  reason: string,
  error: AppError,
  extra: Record<string, unknown> = {},
) {
  const { attempt } = run;
  const scored = await scoreAttempt(
    run.em,
    {
      workspaceId: attempt.workspaceId,
      email: attempt.email,
      ip: attempt.origin.ip,
      userAgent: attempt.origin.userAgent,
      userId: user?.id ?? null,
      now: run.now,
      lockedAccount: user?.status === 'locked',
    },
    { kind: 'failure', reason },
  );
  recordAudit(scope(run, user), {
    eventType: 'auth.login',
    outcome: 'failure',
    ...(user ? { target: { type: 'user', id: user.id } } : {}),
    details: { reason, email: attempt.email, risk_score: scored.score, ...extra },
  });
  return error;
}

/**
 * Stage 1, password. Unknown email and wrong password are the same answer, after the same Argon2id
 * work. Everything else (account state included) is decided only once the password is right.
 */
async function checkPassword(em: EntityManager, attempt: SignInAttempt, now: Date): Promise<{ user: SignInUser; liveActions: boolean }> {
  const [row] = await runStatementIn<{
    id: string;
    email: string;
    status: UserStatus;
    password_hash: string | null;
    locked_until: string | null;
    has_factor: boolean;
    live_actions: boolean;
  }>(em, USER_BY_EMAIL, [attempt.workspaceId, attempt.email]);
  const user: SignInUser | null = row
    ? {
        id: row.id,
        email: row.email,
        status: row.status,
        passwordHash: row.password_hash,
        lockedUntil: row.locked_until ? new Date(row.locked_until) : null,
        hasVerifiedFactor: row.has_factor,
      }
    : null;
  if (!user?.passwordHash) {
    await verifyPassword(await dummy(), attempt.password);
    throw await refusal(
      { em, attempt, now },
      user,
      user ? 'no_password' : 'unknown_email',
      new AppError('INVALID_CREDENTIALS', WRONG, { keepChanges: true }),
    );
  }
  await expireLock(em, attempt.workspaceId, user, now);
  const match = await verifyPassword(user.passwordHash, attempt.password);
  if (!match) {
    const locked = await countFailure(em, attempt.workspaceId, user, now);
    throw await refusal(
      { em, attempt, now },
      user,
      'wrong_password',
      new AppError('INVALID_CREDENTIALS', WRONG, { keepChanges: true }),
      // The attempt that locked the account says so; the answer stays the same as any wrong password's.
      locked ? { account_locked: true } : {},
    );
  }
  user.legacyPasswordForm = match === 'legacy';
  return { user, liveActions: row?.live_actions ?? true };
}

/** Stage 2, account state: deactivated and locked accounts are refused, now that the password is known right. */
const accountState: SignInStage = async (run) => {
  if (run.user.status === 'deactivated') {
    throw await refusal(
      run,
      run.user,
      'account_deactivated',
      new AppError('ACCOUNT_DEACTIVATED', 'This account has been deactivated', { keepChanges: true }),
    );
  }
  if (run.user.status === 'locked') throw await refusal(run, run.user, 'account_locked', accountLocked(run.user.lockedUntil));
  return undefined;
};

async function rehashIfDue(run: SignInRun): Promise<string | null> {
  const { passwordHash, legacyPasswordForm } = run.user;
  return passwordHash && (legacyPasswordForm || needsRehash(passwordHash)) ? hashPassword(run.attempt.password) : null;
}

/** The API's finish: a session, tokens, the audit row and the bookkeeping of a good sign-in, in one statement. */
const issueTokens: SignInFinish<SignInResult> = async (run) => {
  const newPasswordHash = await rehashIfDue(run);
  const method = run.attempt.method ?? 'password';
  const tokens = await startSession(
    run.deps,
    run.em,
    { userId: run.user.id, method, newPasswordHash, claims: run.claims ?? null },
    run.attempt.origin,
  );
  return { kind: 'tokens', tokens };
};

/**
 * The stages after the password, in order: account state → risk (threat detection) → actions →
 * second factor, then the finish (tokens). Each module owns its stage; this list owns the order.
 * Actions run before the second factor so that one may require it (step-up).
 */
export const SIGN_IN_STAGES: SignInStage[] = [accountState, riskStage, actionsStage, secondFactorStage];

async function runStages<T>(run: SignInRun, finish: SignInFinish<T>): Promise<T | SignInChallenge> {
  for (const stage of SIGN_IN_STAGES) {
    const result = await stage(run);
    if (result) return result;
  }
  return finish(run);
}

/**
 * The password, every stage, then `finish`; a stage may answer a second-factor challenge instead.
 *
 * `em` need not be in a transaction, and the API's sign-in opens none, so no connection is held while
 * Argon2id runs (or waits for a core): every write of the pipeline is one statement, atomic on its
 * own (the attempt's risk row, a failure count, the session with its audit row and event), and the
 * rows it adds to `em` (a refusal's audit row, a challenge) are written at the end, also when the
 * attempt is refused (`keepChanges`). In a caller's transaction all of it commits with the caller.
 */
export async function signInWith<T>(
  deps: AppDeps,
  em: EntityManager,
  attempt: SignInAttempt,
  finish: SignInFinish<T>,
): Promise<T | SignInChallenge> {
  return counted(deps, () =>
    writingAddedRows(em, async () => {
      const now = deps.clock.now();
      const { user, liveActions } = await checkPassword(em, attempt, now);
      return runStages({ deps, em, attempt, now, user, liveActions }, finish);
    }),
  );
}

/** Writes the rows `run` added to `em` once it is done, and when it is refused with `keepChanges`. */
export async function writingAddedRows<T>(em: EntityManager, run: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await run();
  } catch (error) {
    if (error instanceof AppError && error.keepChanges) await em.flush();
    throw error;
  }
  await em.flush();
  return result;
}

/** Counts the attempt's outcome for `/metrics`: success, challenge, or the code it was refused with. */
async function counted<T>(deps: AppDeps, attempt: () => Promise<T>): Promise<T> {
  try {
    const result = await attempt();
    const kind = (result as { kind?: unknown }).kind;
    deps.metrics.signIn(kind === 'challenge' ? 'challenge' : 'success');
    return result;
  } catch (error) {
    deps.metrics.signIn(error instanceof AppError ? error.appCode : 'error');
    throw error;
  }
}

export function signIn(deps: AppDeps, em: EntityManager, attempt: SignInAttempt): Promise<SignInResult> {
  return signInWith(deps, em, attempt, issueTokens);
}

export interface SessionlessSignIn {
  workspaceId: string;
  userId: string;
  email: string;
  /** `password`, or `mfa` once a challenge was answered. */
  method: string;
  newPasswordHash?: string | null;
  origin: Origin;
  /** More for the audit row (the OAuth client signed in to). */
  details?: Record<string, unknown>;
}

/**
 * The bookkeeping of a good sign-in that opens no session of this service (the hosted OAuth sign-in:
 * the authorization server keeps its own): failures reset, last sign-in, a rehash when due, the
 * `user.signed_in` event (no `session_id`: the session is the authorization server's; the client
 * signed in to instead) and the audit row. The same as `startSession` writes, less the session and
 * its tokens.
 */
export async function recordSessionlessSignIn(em: EntityManager, signIn: SessionlessSignIn, now: Date): Promise<void> {
  await em.execute(
    `update users set failed_login_count = 0, last_sign_in_at = ?, password_hash = coalesce(?, password_hash),
            updated_at = case when ?::text is null then updated_at else ? end
      where id = ?`,
    [now, signIn.newPasswordHash ?? null, signIn.newPasswordHash ?? null, now, signIn.userId],
  );
  emitEvent(
    { em, workspaceId: signIn.workspaceId },
    'user.signed_in',
    { user_id: signIn.userId, session_id: null, method: signIn.method, client_id: signIn.details?.client_id ?? null },
    now,
  );
  if (signIn.method === CHALLENGE_ANSWERED) return;
  recordAudit(
    { em, workspaceId: signIn.workspaceId, actor: { type: 'user', id: signIn.userId }, ...signIn.origin },
    {
      eventType: 'auth.login',
      target: { type: 'user', id: signIn.userId },
      details: { method: signIn.method, email: signIn.email, ...signIn.details },
    },
  );
}

/** A finish that records the sign-in and answers who signed in, opening no session (see above). */
export function sessionlessFinish(details: Record<string, unknown>): SignInFinish<{ kind: 'authenticated'; userId: string }> {
  return async (run) => {
    const signIn: SessionlessSignIn = {
      workspaceId: run.attempt.workspaceId,
      userId: run.user.id,
      email: run.user.email,
      method: 'password',
      newPasswordHash: await rehashIfDue(run),
      origin: run.attempt.origin,
      details,
    };
    await recordSessionlessSignIn(run.em, signIn, run.now);
    return { kind: 'authenticated', userId: run.user.id };
  };
}

/**
 * A user whose identity an external provider confirmed (social sign-in, SSO): the password stage is
 * skipped, every later stage (account state, risk, second factor, tokens) runs as for a password.
 */
export async function signInVerifiedUser(
  deps: AppDeps,
  em: EntityManager,
  input: { workspaceId: string; userId: string; method: string; origin: Origin },
): Promise<SignInResult> {
  const [row] = await em.execute<{ id: string; email: string; status: UserStatus; locked_until: Date | null; has_factor: boolean }[]>(
    `select id, email, status, locked_until,
            exists (select 1 from mfa_factors f where f.user_id = users.id and f.status = 'Verified') as has_factor
       from users where workspace_id = ? and id = ?`,
    [input.workspaceId, input.userId],
  );
  if (!row) throw new AppError('INVALID_TOKEN', 'This account no longer exists');
  const now = deps.clock.now();
  const user: SignInUser = {
    id: row.id,
    email: row.email,
    status: row.status,
    passwordHash: null,
    lockedUntil: row.locked_until ? new Date(row.locked_until) : null,
    hasVerifiedFactor: row.has_factor,
  };
  await expireLock(em, input.workspaceId, user, now);
  const attempt: SignInAttempt = {
    workspaceId: input.workspaceId,
    email: row.email,
    password: '',
    origin: input.origin,
    method: input.method,
  };
  return counted(deps, () => writingAddedRows(em, () => runStages({ deps, em, attempt, now, user }, issueTokens)));
}
