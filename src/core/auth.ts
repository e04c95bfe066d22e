import { verifyAccessToken } from '../modules/auth/access-token.ts';
import type { AppDeps } from './context.ts';
import { BatchedLookup, keyedBy, perOwner } from './batched-lookup.ts';
import { AppError } from './errors.ts';
import type { Grant } from './permissions.ts';
import { sha256 } from './secrets.ts';
import { runStatement, type Statement } from './sql.ts';

/** Who is calling, already checked. Tenancy comes from here, never from a request body. */
export type Principal =
  | { type: 'api_key'; id: string; workspaceId: string; grants: readonly Grant[] }
  | { type: 'user'; id: string; workspaceId: string; sessionId: string; roles: string[]; grants: readonly Grant[] };

/**
 * The credential is any run of printable ASCII without spaces: wider than RFC 6750's b64token, because
 * an operator-chosen BOOTSTRAP_API_KEY or PLATFORM_API_TOKEN may hold any such character (config.ts).
 */
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** Reads `Authorization: Bearer …`; missing or malformed is UNAUTHORIZED. */
export function bearerToken(authorization: string | null): string {
  if (!authorization) {
    throw new AppError('UNAUTHORIZED', 'Send a credential: Authorization: Bearer <token or API key>', { challenge: 'bearer' });
  }
  const match = BEARER.exec(authorization);
  if (!match?.[1]) {
    throw new AppError('UNAUTHORIZED', 'The Authorization header must be "Bearer <token or API key>"', { challenge: 'bearer' });
  }
  return match[1];
}

/*
 * Both lookups below run on every request, so each is one prepared statement rather than ORM finds
 * (several times the CPU; see core/sql.ts and docs/decisions.md), and the lookups of requests that
 * arrive together share one statement (core/batched-lookup.ts).
 */

const API_KEYS: Statement = {
  name: 'auth_api_keys',
  text: 'select key_hash, id, workspace_id from api_keys where key_hash = any($1::text[]) and revoked_at is null',
};

interface LiveKey {
  key_hash: string;
  id: string;
  workspace_id: string;
}

const LIVE_SESSIONS: Statement = {
  name: 'auth_live_sessions',
  text: `select s.id, s.user_id, s.workspace_id,
                coalesce(array_agg(r.key) filter (where r.key is not null), '{}') as roles,
                coalesce(jsonb_agg(r.permissions) filter (where r.key is not null), '[]'::jsonb) as grants,
                (select count(*)::int from signing_keys where revoked_at is not null) as revoked_keys
           from sessions s
           join users u on u.id = s.user_id and u.status <> 'deactivated'
           left join role_assignments ra on ra.user_id = s.user_id and (ra.expires_at is null or ra.expires_at > $2)
           left join roles r on r.id = ra.role_id
          where s.id = any($1::text[]) and s.ended_at is null and s.expires_at > $2
          group by s.id, s.user_id, s.workspace_id`,
};

interface LiveSession {
  id: string;
  user_id: string;
  workspace_id: string;
  roles: string[];
  grants: Grant[][];
  /** How many signing keys are revoked, read in the same statement (one row of a handful per batch). */
  revoked_keys: number;
}

interface CredentialLookups {
  apiKeys: BatchedLookup<LiveKey>;
  sessions: BatchedLookup<LiveSession>;
}

/** One pair of batched lookups per app. */
const lookups = perOwner((deps: AppDeps): CredentialLookups => ({
  apiKeys: new BatchedLookup(
    async (hashes) => keyedBy(await runStatement<LiveKey>(deps.orm, API_KEYS, [hashes]), (row) => row.key_hash),
    (requests) => deps.metrics.credentialLookup('api_key', requests),
  ),
  // The time is read when the statement runs: after every request in the batch arrived.
  sessions: new BatchedLookup(
    async (ids) =>
      keyedBy(await runStatement<LiveSession>(deps.orm, LIVE_SESSIONS, [ids, deps.clock.now().toISOString()]), (row) => row.id),
    (requests) => deps.metrics.credentialLookup('session', requests),
  ),
}));

async function apiKeyPrincipal(deps: AppDeps, secret: string): Promise<Principal> {
  const key = await lookups(deps).apiKeys.load(sha256(secret));
  if (!key) throw new AppError('INVALID_TOKEN', 'The API key is invalid or has been revoked', { challenge: 'bearer' });
  return { type: 'api_key', id: key.id, workspaceId: key.workspace_id, grants: ['*'] };
}

/**
 * A signed, unexpired token is not enough: its session must still be live and its user not
 * deactivated, so logout and revocation act at once, and its signing key unrevoked as the database
 * says when the session is read (a key revoked from the CLI is refused by every instance at once). Roles and permissions are read live too, so an
 * expired role assignment stops granting on the second it expires.
 */
async function accessTokenPrincipal(deps: AppDeps, token: string): Promise<Principal> {
  const { claims, kid } = await verifyAccessToken(
    { keys: deps.keys, clock: deps.clock, issuer: deps.config.BASE_URL, ttlSeconds: deps.config.ACCESS_TOKEN_TTL },
    token,
  );
  const live = await lookups(deps).sessions.load(claims.sid);
  if (!live || live.user_id !== claims.sub || live.workspace_id !== claims.tid) {
    throw new AppError('INVALID_TOKEN', 'The access token is invalid, expired or revoked', { challenge: 'bearer' });
  }
  // A key revoked by another process (the CLI) since this one last loaded the keys: the session's
  // statement counted it, so the token's key is judged against the revocations as committed.
  await deps.keys.catchUpWithRevocations(live.revoked_keys);
  if (deps.keys.isRevoked(kid)) {
    throw new AppError('INVALID_TOKEN', 'The access token is invalid, expired or revoked', { challenge: 'bearer' });
  }
  return {
    type: 'user',
    id: live.user_id,
    workspaceId: live.workspace_id,
    sessionId: claims.sid,
    roles: live.roles,
    grants: live.grants.flat(),
  };
}

/**
 * Resolves the caller from the bearer credential: a user's access token (a JWT: its header, base64url
 * JSON, starts `eyJ`), or else a secret API key (`sk_…` when the service makes one; a
 * BOOTSTRAP_API_KEY is whatever the operator chose). Bad, expired or revoked credentials are
 * INVALID_TOKEN.
 */
export async function authenticate(deps: AppDeps, authorization: string | null): Promise<Principal> {
  const token = bearerToken(authorization);
  if (token.startsWith('eyJ')) return accessTokenPrincipal(deps, token);
  return apiKeyPrincipal(deps, token);
}
