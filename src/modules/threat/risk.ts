import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../../core/ids.ts';
import { runStatementIn, type Statement } from '../../core/sql.ts';
import type { RiskOutcome, RiskReason } from './threat.entity.ts';

/**
 * Without a threat_settings row sign-ins are scored, not blocked: a correct password signs in unless
 * the workspace has turned blocking on (`PATCH /api/v1/threat/settings`), and then a score at or above
 * the threshold (80 unless set) refuses it. Ordinary traffic from one address (an office, a test
 * suite) adds up failures and accounts tried within the hour; blocking by default would lock all of
 * it out.
 */
export const DEFAULT_BLOCK_THRESHOLD = 80;
export const DEFAULT_BLOCKING_ENABLED = false;
/** Scores from here up count as high risk in the statistics. */
export const HIGH_RISK_SCORE = 50;

/** The longest look back of any signal (new IP, new user agent); scores are kept this long. */
export const RISK_HISTORY_DAYS = 90;

/**
 * The signals and what each adds to the 0–100 score (the sum is capped at 100). Every count reads
 * only earlier attempts of the same workspace within its window, and stops counting at `cap` rows,
 * so an attacker flooding one IP cannot make the statement slower.
 */
export const RISK_RULES = {
  /** Failed or blocked attempts from this IP in the last hour: 8 points each, at most 40. */
  failed_attempts_from_ip: { window: '1 hour', per: 8, max: 40, cap: 50 },
  /** Other accounts tried from this IP in the last hour, beyond the first two: 10 points each, at most 30. */
  many_accounts_from_ip: { window: '1 hour', free: 2, per: 10, max: 30, cap: 200 },
  /** Attempts from this IP against locked accounts in the last hour: 15 points each, at most 30. */
  locked_account_probing: { window: '1 hour', per: 15, max: 30, cap: 50 },
  /** Attempts on this account (any IP) in the last 10 minutes, beyond the first four: 5 points each, at most 25. */
  velocity: { window: '10 minutes', free: 4, per: 5, max: 25, cap: 50 },
  /** The account signed in before (90 days) but never from this IP: 15 points. */
  new_ip: { window: `${RISK_HISTORY_DAYS} days`, points: 15, cap: 50 },
  /** The account signed in before (90 days) but never with this user agent: 10 points. */
  new_user_agent: { window: `${RISK_HISTORY_DAYS} days`, points: 10 },
} as const;

const R = RISK_RULES;

/**
 * One statement per attempt (the sign-in hot path gets one extra round trip, no more): read the
 * signals, score them, read the workspace's threshold, decide, and insert the scored row.
 * `$8 = 'decide'` asks for a decision (the password was right); anything else is recorded as given.
 *
 * Every read is ordered like the index it must use (`created_at desc` after the address or the
 * account), so it stays a few pages however busy the workspace: with statistics older than the last
 * hour (between two autovacuum runs) the planner saw the same cost in the account index and read the
 * counts by address through it, over every sign-in of the workspace in the hour. The signals are
 * `materialized`: inlined, the score and the reasons each ran every read again.
 */
export const SCORE_ATTEMPT: Statement = {
  name: 'threat_score_attempt',
  text: `with signals as materialized (
           select
             (select count(*)::int from (select 1 from risk_scores where workspace_id = $1 and ip = $3 and outcome <> 'allowed'
                 and created_at > $5::timestamptz - interval '${R.failed_attempts_from_ip.window}'
                 order by created_at desc limit ${R.failed_attempts_from_ip.cap}) x) as ip_failures,
             (select count(distinct email)::int from (select email from risk_scores where workspace_id = $1 and ip = $3 and email <> $2
                 and created_at > $5::timestamptz - interval '${R.many_accounts_from_ip.window}'
                 order by created_at desc limit ${R.many_accounts_from_ip.cap}) x) as ip_accounts,
             (select count(*)::int from (select 1 from risk_scores where workspace_id = $1 and ip = $3 and locked_account
                 and created_at > $5::timestamptz - interval '${R.locked_account_probing.window}'
                 order by created_at desc limit ${R.locked_account_probing.cap}) x) as ip_locked,
             (select count(*)::int from (select 1 from risk_scores where workspace_id = $1 and email = $2
                 and created_at > $5::timestamptz - interval '${R.velocity.window}' limit ${R.velocity.cap}) x) as account_attempts,
             h.known, h.seen_ip, h.seen_ua
           from (select count(*) > 0 as known, coalesce(bool_or(ip = $3), false) as seen_ip,
                        coalesce(bool_or(user_agent is not distinct from $4), false) as seen_ua
                   from (select ip, user_agent from risk_scores where workspace_id = $1 and email = $2 and outcome = 'allowed'
                            and created_at > $5::timestamptz - interval '${R.new_ip.window}'
                          order by created_at desc limit ${R.new_ip.cap}) x) h
         ), points as (
           select s.*,
             least(${R.failed_attempts_from_ip.max}, ip_failures * ${R.failed_attempts_from_ip.per}) as p_ip_failures,
             least(${R.many_accounts_from_ip.max}, greatest(0, ip_accounts - ${R.many_accounts_from_ip.free}) * ${R.many_accounts_from_ip.per}) as p_accounts,
             least(${R.locked_account_probing.max}, ip_locked * ${R.locked_account_probing.per}) as p_locked,
             least(${R.velocity.max}, greatest(0, account_attempts - ${R.velocity.free}) * ${R.velocity.per}) as p_velocity,
             case when known and not seen_ip then ${R.new_ip.points} else 0 end as p_new_ip,
             case when known and not seen_ua then ${R.new_user_agent.points} else 0 end as p_new_ua
           from signals s
         ), scored as (
           select p.*,
             least(100, p_ip_failures + p_accounts + p_locked + p_velocity + p_new_ip + p_new_ua) as score,
             (select coalesce(jsonb_agg(r order by (r->>'points')::int desc), '[]'::jsonb) from (values
                (case when p_ip_failures > 0 then jsonb_build_object('code', 'failed_attempts_from_ip', 'points', p_ip_failures, 'count', ip_failures) end),
                (case when p_accounts > 0 then jsonb_build_object('code', 'many_accounts_from_ip', 'points', p_accounts, 'count', ip_accounts) end),
                (case when p_locked > 0 then jsonb_build_object('code', 'locked_account_probing', 'points', p_locked, 'count', ip_locked) end),
                (case when p_velocity > 0 then jsonb_build_object('code', 'velocity', 'points', p_velocity, 'count', account_attempts) end),
                (case when p_new_ip > 0 then jsonb_build_object('code', 'new_ip', 'points', p_new_ip) end),
                (case when p_new_ua > 0 then jsonb_build_object('code', 'new_user_agent', 'points', p_new_ua) end)
              ) v(r) where r is not null) as reasons,
             coalesce(t.block_threshold, ${DEFAULT_BLOCK_THRESHOLD}) as threshold,
             coalesce(t.blocking_enabled, ${DEFAULT_BLOCKING_ENABLED}) as blocking_enabled
           from points p left join threat_settings t on t.workspace_id = $1
         )
         insert into risk_scores (id, workspace_id, user_id, email, ip, user_agent, score, reasons, outcome, failure_reason,
                                  locked_account, threshold, created_at)
         select $6::text, $1::text, $7::text, $2::text, $3::text, $4::text, score, reasons,
                case when $8::text <> 'decide' then $8::text
                     when blocking_enabled and score >= threshold then 'blocked' else 'allowed' end,
                $9::text, $10::boolean, threshold, $5::timestamptz
           from scored
         returning id, score, reasons, outcome, threshold`,
};

export interface Attempt {
  workspaceId: string;
  email: string;
  ip: string | null;
  userAgent: string | null;
  userId: string | null;
  now: Date;
  /** The account was locked when the attempt came (probing a locked account is a signal). */
  lockedAccount: boolean;
}

export interface Scored {
  /** The stored row (`rsk_…`). */
  id: string;
  score: number;
  reasons: RiskReason[];
  outcome: RiskOutcome;
  threshold: number;
}

/**
 * Scores an attempt and stores it, in the caller's transaction. `failure` (with the refusal's reason)
 * records an attempt already refused; `decide` lets the score block it.
 */
export async function scoreAttempt(
  em: EntityManager,
  attempt: Attempt,
  outcome: { kind: 'decide' } | { kind: 'failure'; reason: string },
): Promise<Scored> {
  const [row] = await runStatementIn<Scored>(em, SCORE_ATTEMPT, [
    attempt.workspaceId,
    attempt.email,
    attempt.ip,
    attempt.userAgent,
    attempt.now.toISOString(),
    newId('rsk'),
    attempt.userId,
    outcome.kind === 'decide' ? 'decide' : 'failure',
    outcome.kind === 'failure' ? outcome.reason : null,
    attempt.lockedAccount,
  ]);
  if (!row) throw new Error('the risk statement wrote no row');
  return row;
}
