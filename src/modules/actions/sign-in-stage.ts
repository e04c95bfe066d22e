import { recordAudit } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { runStatementIn, type Statement } from '../../core/sql.ts';
import type { SignInRun, SignInStage } from '../auth/sign-in.ts';
import { recordLaterRefusal } from '../threat/risk-stage.ts';
import type { ActionOutcome, PostLoginEvent } from './isolate-runner.ts';

/*
 * (This module imports only types from auth/sign-in.ts: sign-in.ts imports this stage, and a value
 * import back would make the two modules' evaluation order matter.)
 */

/**
 * The workspace's deployed post-login actions, in creation order. Answered from a partial index
 * (`actions_live_index`). A password sign-in learns with the user whether there are any
 * (`run.liveActions`) and asks only then.
 */
const LIVE_ACTIONS: Statement = {
  name: 'actions_live_post_login',
  text: `select id, name, deployed_code from actions
          where workspace_id = $1 and trigger = 'post-login' and deployed_code is not null
          order by id`,
};

/** What the event tells about the user beyond what the password stage read. */
const EVENT_USER: Statement = {
  name: 'actions_event_user',
  text: `select u.name, u.metadata, u.email_verified,
                (select coalesce(array_agg(r.key order by r.key), '{}') from role_assignments ra join roles r on r.id = ra.role_id
                  where ra.user_id = u.id and (ra.expires_at is null or ra.expires_at > $2)) as roles
           from users u where u.id = $1`,
};

interface LiveAction {
  id: string;
  name: string;
  deployed_code: string;
}

async function postLoginEvent(run: SignInRun): Promise<PostLoginEvent> {
  const [row] = await runStatementIn<{
    name: string | null;
    metadata: Record<string, unknown> | null;
    email_verified: boolean;
    roles: string[];
  }>(run.em, EVENT_USER, [run.user.id, run.now.toISOString()]);
  return {
    user: {
      id: run.user.id,
      email: run.user.email,
      email_verified: row?.email_verified ?? false,
      name: row?.name ?? null,
      roles: row?.roles ?? [],
      metadata: row?.metadata ?? {},
      mfa_enabled: run.user.hasVerifiedFactor,
    },
    request: { ip: run.attempt.origin.ip, user_agent: run.attempt.origin.userAgent },
    workspace: { id: run.attempt.workspaceId },
  };
}

/**
 * A refused sign-in, answering the error to throw: its `auth.login` failure row is kept although the
 * request fails, and the attempt's risk row becomes a failure with the same reason.
 */
async function refused(run: SignInRun, details: { reason: string } & Record<string, unknown>, error: AppError): Promise<AppError> {
  await recordLaterRefusal(run, details.reason);
  recordAudit(
    { em: run.em, workspaceId: run.attempt.workspaceId, actor: { type: 'user', id: run.user.id }, ...run.attempt.origin },
    {
      eventType: 'auth.login',
      outcome: 'failure',
      target: { type: 'user', id: run.user.id },
      details: { email: run.attempt.email, ...details },
    },
  );
  return error;
}

async function runAction(run: SignInRun, action: LiveAction, event: PostLoginEvent): Promise<ActionOutcome> {
  try {
    return await run.deps.sandbox.runPostLogin(action.deployed_code, event);
  } catch (error) {
    // The sandbox cannot run here (503): the workspace's rules cannot be applied, so nobody gets in.
    if (error instanceof AppError) {
      throw await refused(
        run,
        { reason: 'action_unavailable', action_id: action.id },
        new AppError(error.appCode, error.message, { status: error.status, keepChanges: true, cause: error }),
      );
    }
    throw error;
  }
}

/**
 * The actions stage: the workspace's deployed post-login actions run in order, each in a fresh
 * sandbox. One that denies, or fails in any way (throws, times out, runs out of memory), refuses the
 * sign-in (fail closed), with an audit row saying which and why. Custom claims are collected for the
 * access token. When one requires a second factor, a user with a verified factor goes on to the
 * second-factor stage's challenge (which every such user gets anyway), and a user without one is
 * refused with MFA_ENROLLMENT_REQUIRED.
 */
export const actionsStage: SignInStage = async (run) => {
  if (run.liveActions === false) return undefined;
  const actions = await runStatementIn<LiveAction>(run.em, LIVE_ACTIONS, [run.attempt.workspaceId]);
  if (actions.length === 0) return undefined;
  const event = await postLoginEvent(run);
  const claims: Record<string, unknown> = {};
  let requireSecondFactor = false;
  for (const action of actions) {
    const outcome = await runAction(run, action, event);
    const which = { action_id: action.id, action_name: action.name };
    if (outcome.failure) {
      throw await refused(
        run,
        { reason: 'action_failed', ...which, failure: outcome.failure.kind, message: outcome.failure.message, line: outcome.failure.line },
        new AppError('FORBIDDEN', 'Sign-in was refused: a sign-in rule of this workspace failed', { keepChanges: true }),
      );
    }
    if (outcome.denied !== null) {
      throw await refused(
        run,
        { reason: 'action_denied', ...which, message: outcome.denied },
        new AppError('FORBIDDEN', outcome.denied, { keepChanges: true }),
      );
    }
    Object.assign(claims, outcome.claims);
    if (outcome.requireSecondFactor) requireSecondFactor = true;
  }
  if (Object.keys(claims).length > 0) run.claims = claims;
  if (requireSecondFactor && !run.user.hasVerifiedFactor) {
    throw await refused(
      run,
      { reason: 'mfa_enrollment_required' },
      new AppError(
        'MFA_ENROLLMENT_REQUIRED',
        'This sign-in requires a second factor, and this account has none: enroll an authenticator app first, then sign in again',
        { keepChanges: true },
      ),
    );
  }
  return undefined;
};
