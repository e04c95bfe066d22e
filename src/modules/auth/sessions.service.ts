import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit } from '../../core/audit.ts';
import type { AppDeps } from '../../core/context.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { User } from '../users/user.entity.ts';
import { toUserView } from '../users/users.service.ts';
import { signAccessToken } from './access-token.ts';
import type { SessionView, TokensView } from './auth.schema.ts';
import { RefreshToken, Session } from './session.entity.ts';

export interface Origin {
  ip: string | null;
  userAgent: string | null;
  requestId: string | null;
}

const INVALID_REFRESH = 'The refresh token is invalid, expired or revoked';

async function activeRoleKeys(em: EntityManager, userId: string, now: Date): Promise<string[]> {
  const rows = await em.execute<{ key: string }[]>(
    `select r.key from role_assignments ra join roles r on r.id = ra.role_id
      where ra.user_id = ? and (ra.expires_at is null or ra.expires_at > ?) order by r.key`,
    [userId, now],
  );
  return rows.map((r) => r.key);
}

function issueRefreshToken(deps: AppDeps, em: EntityManager, session: Session, now: Date): string {
  const secret = newSecret('rt_');
  em.persist(
    Object.assign(new RefreshToken(), {
      id: newId('rtk'),
      workspaceId: session.workspaceId,
      sessionId: session.id,
      tokenHash: sha256(secret),
      createdAt: now,
      expiresAt: session.expiresAt,
      usedAt: null,
    }),
  );
  return secret;
}

async function tokensFor(deps: AppDeps, em: EntityManager, user: User, session: Session, refreshToken: string): Promise<TokensView> {
  const roles = await activeRoleKeys(em, user.id, deps.clock.now());
  const accessToken = await signAccessToken(
    { keys: deps.keys, clock: deps.clock, issuer: deps.config.BASE_URL, ttlSeconds: deps.config.ACCESS_TOKEN_TTL },
    { sub: user.id, tid: user.workspaceId, sid: session.id, roles },
  );
  return {
    access_token: accessToken,
    refresh_token: refreshToken,
    token_type: 'Bearer',
    expires_in: deps.config.ACCESS_TOKEN_TTL,
    user: toUserView(user),
  };
}

/** A new session for a user whose sign-in has passed every stage. */
export async function startSession(deps: AppDeps, em: EntityManager, user: User, origin: Origin): Promise<TokensView> {
  const now = deps.clock.now();
  const session = Object.assign(new Session(), {
    id: newId('ses'),
    workspaceId: user.workspaceId,
    userId: user.id,
    createdAt: now,
    lastRefreshedAt: null,
    expiresAt: new Date(now.getTime() + deps.config.REFRESH_TOKEN_TTL * 1000),
    endedAt: null,
    endReason: null,
    ip: origin.ip,
    userAgent: origin.userAgent,
  });
  em.persist(session);
  return tokensFor(deps, em, user, session, issueRefreshToken(deps, em, session, now));
}

/**
 * Swaps a refresh token for new tokens. The old token is consumed by one conditional UPDATE, so of
 * several concurrent uses exactly one wins. A token that was already used means it leaked: the whole
 * session ends (and stays ended, even though the request fails).
 */
export async function refreshSession(deps: AppDeps, em: EntityManager, token: string, origin: Origin): Promise<TokensView> {
  const now = deps.clock.now();
  const hash = sha256(token);
  const [consumed] = await em.execute<{ session_id: string; workspace_id: string }[]>(
    `update refresh_tokens set used_at = ? where token_hash = ? and used_at is null and expires_at > ? returning session_id, workspace_id`,
    [now, hash, now],
  );
  if (!consumed) {
    const [known] = await em.execute<{ session_id: string; workspace_id: string; used_at: Date | null }[]>(
      'select session_id, workspace_id, used_at from refresh_tokens where token_hash = ?',
      [hash],
    );
    if (known?.used_at) {
      await em.execute(`update sessions set ended_at = ?, end_reason = 'refresh_token_reuse' where id = ? and ended_at is null`, [
        now,
        known.session_id,
      ]);
      recordAudit(
        { em, workspaceId: known.workspace_id, actor: { type: 'system', id: null }, ...origin },
        {
          eventType: 'auth.refresh',
          outcome: 'failure',
          target: { type: 'session', id: known.session_id },
          details: { reason: 'refresh_token_reuse' },
        },
      );
      throw new AppError('INVALID_TOKEN', INVALID_REFRESH, { keepChanges: true });
    }
    throw new AppError('INVALID_TOKEN', INVALID_REFRESH);
  }
  em.setFilterParams('tenant', { workspaceId: consumed.workspace_id });
  const session = await em.findOne(Session, { id: consumed.session_id, endedAt: null, expiresAt: { $gt: now } });
  const user = session ? await em.findOne(User, { id: session.userId, status: { $ne: 'deactivated' } }) : null;
  if (!session || !user) throw new AppError('INVALID_TOKEN', INVALID_REFRESH);
  session.lastRefreshedAt = now;
  recordAudit(
    { em, workspaceId: session.workspaceId, actor: { type: 'user', id: user.id }, ...origin },
    { eventType: 'auth.refresh', target: { type: 'session', id: session.id } },
  );
  return tokensFor(deps, em, user, session, issueRefreshToken(deps, em, session, now));
}

/** Ends one session; false when it was not live. */
export async function endSession(em: EntityManager, sessionId: string, now: Date, reason: string): Promise<boolean> {
  const ended = await em.execute<{ id: string }[]>(
    'update sessions set ended_at = ?, end_reason = ? where id = ? and ended_at is null returning id',
    [now, reason, sessionId],
  );
  return ended.length > 0;
}

/** Ends every live session of a user, but `except`; answers how many ended. */
export async function endUserSessions(em: EntityManager, userId: string, now: Date, reason: string, except?: string): Promise<number> {
  const ended = await em.execute<{ id: string }[]>(
    'update sessions set ended_at = ?, end_reason = ? where user_id = ? and ended_at is null and id <> ? returning id',
    [now, reason, userId, except ?? ''],
  );
  return ended.length;
}

export async function listSessions(em: EntityManager, userId: string, current: string, now: Date): Promise<SessionView[]> {
  const sessions = await em.find(Session, { userId, endedAt: null, expiresAt: { $gt: now } }, { orderBy: { createdAt: 'desc' } });
  return sessions.map((s) => ({
    id: s.id,
    current: s.id === current,
    created_at: s.createdAt.toISOString(),
    last_refreshed_at: s.lastRefreshedAt?.toISOString() ?? null,
    expires_at: s.expiresAt.toISOString(),
    ip: s.ip,
    user_agent: s.userAgent,
  }));
}

/** A user's own session by id; anyone else's (or a malformed id) is NOT_FOUND. */
export async function endOwnSession(em: EntityManager, userId: string, sessionId: string, now: Date): Promise<void> {
  const session = isId('ses', sessionId) ? await em.findOne(Session, { id: sessionId, userId, endedAt: null }) : null;
  if (!session) throw new AppError('NOT_FOUND', 'No such session');
  await endSession(em, session.id, now, 'revoked');
}
