import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { BatchedCall } from '../../core/batched-call.ts';
import { keyedBy, perOwner } from '../../core/batched-lookup.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { runStatement, runStatementIn, type Statement } from '../../core/sql.ts';
import { USER_COLUMNS, userRowToView, type UserRow } from '../users/user-row.ts';
import { signAccessToken } from './access-token.ts';
import type { SessionView, TokensView } from './auth.schema.ts';
import { Session } from './session.entity.ts';
import { endOAuthSessionsOf } from '../../oauth/adapter.ts';
import { emitEvent, type EventScope } from '../events/events.ts';
import { retirePendingChallenges } from '../mfa/challenge-retirement.ts';
import { liveSessionOfRefreshToken } from './refresh-token-session.ts';

export interface Origin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

const INVALID_REFRESH = 'The refresh token is invalid, expired or revoked';

/**
 * The sign-in method of a session that completes a second-factor challenge. It writes no `auth.login`
 * row: the password step wrote one (with `mfa_required`) and the code its `auth.mfa_verify`, so each
 * sign-in call leaves one row and a sign-in one `auth.login` success.
 */
export const CHALLENGE_ANSWERED = 'mfa';

/*
 * (The final SELECT reads the user from the UPDATE's RETURNING: within one statement, other reads of
 * `users` would still see the row as it was before.)
 *
 * A sign-in's writes in one prepared statement (core/sql.ts): the user's sign-in bookkeeping, the
 * session, its first refresh token, the audit row and the `user.signed_in` outbox event, all or
 * nothing, answering the user and the roles the access token names. One statement needs no
 * transaction around it: sign-in opens none (sign-in.ts).
 */
const START: Statement = {
  name: 'auth_session_start',
  text: `with u as (
           update users set failed_login_count = 0, last_sign_in_at = $2,
                  password_hash = coalesce($3, password_hash),
                  updated_at = case when $3::text is null then updated_at else $2 end
            where id = $1 and status <> 'deactivated' and not (status = 'locked' and locked_until > $2)
           returning id, workspace_id, email, name, status, created_at, updated_at, last_sign_in_at, email_verified, metadata
         ), s as (
           insert into sessions (id, workspace_id, user_id, created_at, expires_at, ip, user_agent, claims)
           select $4, workspace_id, id, $2, $5, $8, $9, $13::jsonb from u
           returning id
         ), r as (
           insert into refresh_tokens (id, workspace_id, session_id, token_hash, created_at, expires_at)
           select $6, workspace_id, $4, $7, $2, $5 from u
           returning id
         ), a as (
           insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id,
                                     ip, user_agent, request_id, details, created_at)
           select $10, workspace_id, 'auth.login', 'success', 'user', id, 'user', id, $8, $9, $11,
                  jsonb_build_object('method', $12::text, 'email', email), $2 from u
            where $12::text <> '${CHALLENGE_ANSWERED}'
           returning id
         ), e as (
           insert into events (id, workspace_id, type, payload, created_at)
           select $14, workspace_id, 'user.signed_in', jsonb_build_object('user_id', id, 'session_id', $4::text, 'method', $12::text), $2
             from u
           returning id
         )
         select u.*,
                exists (select 1 from mfa_factors f where f.user_id = u.id and f.status = 'Verified') as mfa_enabled,
                (select coalesce(array_agg(r.key order by r.key), '{}') from role_assignments ra join roles r on r.id = ra.role_id
                  where ra.user_id = u.id and (ra.expires_at is null or ra.expires_at > $2)) as roles,
                (select count(*) from s) + (select count(*) from r) + (select count(*) from a) + (select count(*) from e) as written,
                (select count(*)::int from signing_keys where revoked_at is not null) as revoked_keys
           from u`,
};

/**
 * How many signing keys are revoked, read by the statement that starts or refreshes the session: an
 * instance whose loaded keys differ reloads them before it signs (a key revoked from the CLI signs no
 * token more on any instance, without a query of its own).
 */
interface SignedRow {
  revoked_keys: number;
}

interface StartedRow extends UserRow, SignedRow {
  workspace_id: string;
  roles: string[];
}

/** Custom claims (from actions) of the session, carried by each of its access tokens. */
type CustomClaims = Record<string, unknown> | null;

async function tokensFor(
  deps: AppDeps,
  row: StartedRow | RotatedRow,
  sessionId: string,
  refreshToken: string,
  claims: CustomClaims,
): Promise<TokensView> {
  await deps.keys.catchUpWithRevocations(row.revoked_keys);
  const accessToken = await signAccessToken(
    { keys: deps.keys, clock: deps.clock, issuer: deps.config.BASE_URL, ttlSeconds: deps.config.ACCESS_TOKEN_TTL },
    { sub: row.id, tid: row.workspace_id, sid: sessionId, roles: row.roles },
    claims,
  );
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    token_type: 'Bearer',
    expires_in: deps.config.ACCESS_TOKEN_TTL,
    user: userRowToView(row, deps.clock.now()),
  };
}

export interface SessionStart {
  userId: string;
  /** How the user proved who they are, for the audit row (`password`, later `mfa`). */
  method: string;
  /** A fresh hash when the stored one used old parameters. */
  newPasswordHash?: string | null;
  /** Custom access-token claims from actions; kept on the session, so refreshed tokens carry them too. */
  claims?: CustomClaims;
}

/** A new session for a user whose sign-in has passed every stage, in `em`'s transaction if it is in one. */
export async function startSession(deps: AppDeps, em: EntityManager, start: SessionStart, origin: Origin): Promise<TokensView> {
  const now = deps.clock.now();
  const sessionId = newId('ses');
  const secret = newSecret('rt_');
  const [row] = await runStatementIn<StartedRow>(em, START, [
    start.userId,
    now.toISOString(),
    start.newPasswordHash ?? null,
    sessionId,
    new Date(now.getTime() + deps.config.REFRESH_TOKEN_TTL * 1000).toISOString(),
    newId('rtk'),
    sha256(secret),
    origin.ip,
    origin.userAgent,
    newId('evt'),
    origin.requestId,
    start.method,
    start.claims ? JSON.stringify(start.claims) : null,
    newId('msg'),
  ]);
  if (!row) throw new AppError('INVALID_CREDENTIALS', 'The provided credentials are incorrect');
  return tokensFor(deps, row, sessionId, secret, start.claims ?? null);
}

/*
 * Refresh runs on every client every fifteen minutes, so it is prepared statements instead of ORM
 * work (core/sql.ts), each atomic on its own so no transaction is opened: one consumes the token and
 * does everything else in the same statement; only when that consumed nothing, one handles reuse.
 *
 * The refreshes of one turn of the event loop share that statement (`rotations` below): each input
 * row is one refresh, with its own time, ids and origin. Two tokens of one session may be consumed by
 * one statement (`touched` updates the session once), as by two statements one after the other.
 */
const ROTATE: Statement = {
  name: 'auth_refresh_rotate_many',
  text: `with input as (
           select * from unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
             as i(token_hash, now, fresh_id, fresh_hash, audit_id, ip, user_agent, request_id, workspace_id)
         ), consumed as (
           update refresh_tokens t set used_at = i.now
             from input i
            where t.token_hash = i.token_hash and t.used_at is null and t.expires_at > i.now
              and (i.workspace_id is null or t.workspace_id = i.workspace_id)
           returning t.session_id, i.*
         ), touched as (
           update sessions s set last_refreshed_at = c.now
             from (select distinct on (session_id) session_id, now from consumed order by session_id, now desc) c, users u
            where s.id = c.session_id and u.id = s.user_id
              and s.ended_at is null and s.expires_at > c.now and u.status <> 'deactivated'
           returning s.id, s.workspace_id, s.user_id, s.expires_at, s.claims
         ), live as (
           select c.*, s.workspace_id as session_workspace_id, s.user_id, s.expires_at, s.claims
             from consumed c join touched s on s.id = c.session_id
         ), fresh as (
           insert into refresh_tokens (id, workspace_id, session_id, token_hash, created_at, expires_at)
           select fresh_id, session_workspace_id, session_id, fresh_hash, now, expires_at from live
           returning id
         ), audit as (
           insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id,
                                     ip, user_agent, request_id, details, created_at)
           select audit_id, session_workspace_id, 'auth.refresh', 'success', 'user', user_id, 'session', session_id,
                  ip, user_agent, request_id, '{}'::jsonb, now from live
           returning id
         )
         select l.token_hash, l.session_id, l.claims, ${USER_COLUMNS}, users.workspace_id,
                (select coalesce(array_agg(r.key order by r.key), '{}') from role_assignments ra join roles r on r.id = ra.role_id
                  where ra.user_id = l.user_id and (ra.expires_at is null or ra.expires_at > l.now)) as roles,
                (select count(*) from fresh) + (select count(*) from audit) as written,
                (select count(*)::int from signing_keys where revoked_at is not null) as revoked_keys
           from live l join users on users.id = l.user_id`,
};

/**
 * A token that was used already (or that ROTATE just consumed without finding its session live):
 * reuse ends its session; a session that had ended already (logout, revoke-all, a new password,
 * deactivation, expiry) is audited as `session_ended`, not as reuse.
 */
const REUSED: Statement = {
  name: 'auth_refresh_reuse',
  text: `with known as (
           select session_id, workspace_id from refresh_tokens
            where token_hash = $1 and used_at is not null and ($7::text is null or workspace_id = $7)
         ), ended as (
           update sessions set ended_at = $2, end_reason = 'refresh_token_reuse'
            where id in (select session_id from known) and ended_at is null
           returning id, workspace_id, user_id
         ), told as (
           insert into events (id, workspace_id, type, payload, created_at)
           select $8, workspace_id, 'session.revoked',
                  jsonb_build_object('session_id', id, 'user_id', user_id, 'client_id', null, 'reason', 'refresh_token_reuse'), $2
             from ended
           returning id
         ), audit as (
           insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id,
                                     ip, user_agent, request_id, details, created_at)
           select $3, workspace_id, 'auth.refresh', 'failure', 'system', null, 'session', session_id, $4, $5, $6,
                  jsonb_build_object('reason', case when exists (select 1 from ended) then 'refresh_token_reuse' else 'session_ended' end),
                  $2 from known
           returning id
         )
         select (select count(*) from known) as known,
                (select count(*) from ended) + (select count(*) from told) + (select count(*) from audit) as written`,
};

interface RotatedRow extends UserRow, SignedRow {
  token_hash: string;
  session_id: string;
  workspace_id: string;
  roles: string[];
  claims: CustomClaims;
}

/** One refresh: the presented token's hash, and what its rotation writes. */
interface Rotation {
  tokenHash: string;
  now: string;
  freshId: string;
  freshHash: string;
  auditId: string;
  origin: Origin;
  workspaceId: string | null;
}

/**
 * Runs the refreshes of one turn in one ROTATE, answering each its row, or nothing when its token
 * consumed nothing. A token presented twice in one batch is consumed by its first call only: the
 * others answer nothing once the statement has committed, so their reuse check (REUSED) sees it used,
 * as when the two had run one after the other.
 */
async function rotateAll(orm: MikroORM, rotations: Rotation[]): Promise<(RotatedRow | undefined)[]> {
  const first = new Map<string, Rotation>();
  for (const rotation of rotations) if (!first.has(rotation.tokenHash)) first.set(rotation.tokenHash, rotation);
  const distinct = [...first.values()];
  const column = <T>(pick: (rotation: Rotation) => T) => distinct.map(pick);
  const rows = await runStatement<RotatedRow>(orm, ROTATE, [
    column((r) => r.tokenHash),
    column((r) => r.now),
    column((r) => r.freshId),
    column((r) => r.freshHash),
    column((r) => r.auditId),
    column((r) => r.origin.ip),
    column((r) => r.origin.userAgent),
    column((r) => r.origin.requestId),
    column((r) => r.workspaceId),
  ]);
  const byHash = keyedBy(rows, (row) => row.token_hash);
  return rotations.map((rotation) => (first.get(rotation.tokenHash) === rotation ? byHash.get(rotation.tokenHash) : undefined));
}

/** One batcher of refreshes per app (tests run several apps in one process). */
const rotations = perOwner(
  (deps: AppDeps) =>
    new BatchedCall(
      (batch: Rotation[]) => rotateAll(deps.orm, batch),
      (refreshes) => deps.metrics.refreshBatch(refreshes),
    ),
);

/**
 * Swaps a refresh token for new tokens. The old token is consumed by one conditional UPDATE, so of
 * several concurrent uses exactly one wins. A token that was already used means it leaked: the whole
 * session ends (and stays ended, even though the request fails).
 */
export async function refreshSession(deps: AppDeps, token: string, origin: Origin, workspaceId: string | null = null): Promise<TokensView> {
  const now = deps.clock.now().toISOString();
  const hash = sha256(token);
  const secret = newSecret('rt_');
  const row = await rotations(deps).call({
    tokenHash: hash,
    now,
    freshId: newId('rtk'),
    freshHash: sha256(secret),
    auditId: newId('evt'),
    origin,
    workspaceId,
  });
  if (!row) {
    // Its own atomic statement: the session stays ended although this request fails.
    await runStatement(deps.orm, REUSED, [
      hash,
      now,
      newId('evt'),
      origin.ip,
      origin.userAgent,
      origin.requestId,
      workspaceId,
      newId('msg'),
    ]);
    throw new AppError('INVALID_TOKEN', INVALID_REFRESH);
  }
  return tokensFor(deps, row, row.session_id, secret, row.claims);
}

/**
 * Why a session ended: the `end_reason` of its row and the `reason` of its `session.revoked` event.
 * (An OAuth grant's end says the same: oauth/adapter.ts.)
 */
export type SessionEndReason =
  | 'logout'
  | 'revoked'
  | 'revoke_all'
  | 'password_reset'
  | 'password_change'
  | 'user_locked'
  | 'user_deactivated'
  | 'user_deleted'
  | 'refresh_token_reuse';

/**
 * One `session.revoked` per session that ended, whatever ended it, written with the change. A session
 * of this service names its `ses_` id; an application's (an OAuth grant) has none and names its
 * `client_id` instead, as `user.signed_in` does for the hosted sign-in.
 */
export function tellSessionEnded(
  scope: EventScope,
  ended: { sessionId: string | null; userId: string; clientId: string | null },
  reason: SessionEndReason,
  now: Date,
): void {
  emitEvent(scope, 'session.revoked', { session_id: ended.sessionId, user_id: ended.userId, client_id: ended.clientId, reason }, now);
}

/** Ends one session, telling subscribers; false when it was not live. */
export async function endSession(scope: EventScope, sessionId: string, now: Date, reason: SessionEndReason): Promise<boolean> {
  const ended = await scope.em.execute<{ id: string; user_id: string }[]>(
    'update sessions set ended_at = ?, end_reason = ? where id = ? and ended_at is null returning id, user_id',
    [now, reason, sessionId],
  );
  for (const row of ended) tellSessionEnded(scope, { sessionId: row.id, userId: row.user_id, clientId: null }, reason, now);
  return ended.length > 0;
}

/**
 * Ends every live session of a user, but `except`, and every OAuth grant of theirs (an application's
 * tokens are sessions too), telling subscribers of each; answers how many of both ended.
 */
export async function endUserSessions(
  scope: EventScope,
  userId: string,
  now: Date,
  reason: SessionEndReason,
  except?: string,
): Promise<number> {
  const ended = await scope.em.execute<{ id: string }[]>(
    'update sessions set ended_at = ?, end_reason = ? where user_id = ? and ended_at is null and id <> ? returning id',
    [now, reason, userId, except ?? ''],
  );
  for (const row of ended) tellSessionEnded(scope, { sessionId: row.id, userId, clientId: null }, reason, now);
  const grants = await endOAuthSessionsOf(scope.em, userId);
  for (const grant of grants) tellSessionEnded(scope, { sessionId: null, userId, clientId: grant.clientId }, reason, now);
  return ended.length + grants.length;
}

/** A user's live sessions, a page at a time, newest first (id breaks ties). */
export async function listSessions(em: EntityManager, userId: string, current: string, now: Date, query: PageQuery) {
  const [sessions, total] = await em.findAndCount(
    Session,
    { userId, endedAt: null, expiresAt: { $gt: now } },
    { orderBy: { createdAt: 'desc', id: 'desc' }, ...offsetOf(query) },
  );
  const views = sessions.map((s): SessionView => ({
    id: s.id,
    current: s.id === current,
    created_at: s.createdAt.toISOString(),
    last_refreshed_at: s.lastRefreshedAt?.toISOString() ?? null,
    expires_at: s.expiresAt.toISOString(),
    ip: s.ip,
    user_agent: s.userAgent,
  }));
  return toPage(views, total, query);
}

/** A user's own session by id; anyone else's (or a malformed id) is NOT_FOUND. */
export async function endOwnSession(scope: EventScope, userId: string, sessionId: string, now: Date): Promise<void> {
  const session = isId('ses', sessionId) ? await scope.em.findOne(Session, { id: sessionId, userId, endedAt: null }) : null;
  if (!session) throw new AppError('NOT_FOUND', 'No such session');
  await endSession(scope, session.id, now, 'revoked');
}

/** The caller's actions on their own sessions, each with its audit row. */
/**
 * Ends the caller's session, and the session of a refresh token the client sent along when that one
 * is the caller's too (a client logging out hands over what it holds). A refresh token of anyone
 * else, or of nothing, changes nothing more and is no error (RFC 7009's rule for revocation).
 */
export async function logout(scope: AuditScope, caller: { userId: string; sessionId: string }, now: Date, refreshToken?: string) {
  const also = refreshToken ? await liveSessionOfRefreshToken(scope.em, refreshToken, caller.userId) : null;
  const sessionIds = also && also !== caller.sessionId ? [caller.sessionId, also] : [caller.sessionId];
  let ended = 0;
  for (const sessionId of sessionIds) {
    if (await endSession(scope, sessionId, now, 'logout')) ended += 1;
    recordAudit(scope, { eventType: 'auth.logout', target: { type: 'session', id: sessionId } });
  }
  return { ended_sessions: ended };
}

export async function revokeAllSessions(scope: AuditScope, userId: string, now: Date) {
  const ended = await endUserSessions(scope, userId, now, 'revoke_all');
  await retirePendingChallenges(scope.em, userId, now);
  recordAudit(scope, { eventType: 'auth.sessions_revoke_all', target: { type: 'user', id: userId }, details: { ended_sessions: ended } });
  return { ended_sessions: ended };
}

export async function revokeOwnSession(scope: AuditScope, userId: string, sessionId: string, now: Date) {
  await endOwnSession(scope, userId, sessionId, now);
  recordAudit(scope, { eventType: 'auth.session_revoke', target: { type: 'session', id: sessionId } });
  return { id: sessionId, deleted: true as const };
}
