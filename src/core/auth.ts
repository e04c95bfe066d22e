import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from './errors.ts';
import type { Grant } from './permissions.ts';
import { sha256 } from './secrets.ts';

/** Who is calling, already checked. Tenancy comes from here, never from a request body. */
export type Principal =
  | { type: 'api_key'; id: string; workspaceId: string; grants: readonly Grant[] }
  | { type: 'user'; id: string; workspaceId: string; sessionId: string; roles: string[]; grants: readonly Grant[] };

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i;

/** Reads `Authorization: Bearer …`; missing or malformed is UNAUTHORIZED. */
export function bearerToken(authorization: string | null): string {
  if (!authorization) throw new AppError('UNAUTHORIZED', 'Send a credential: Authorization: Bearer <token or API key>');
  const match = BEARER.exec(authorization);
  if (!match?.[1]) throw new AppError('UNAUTHORIZED', 'The Authorization header must be "Bearer <token or API key>"');
  return match[1];
}

/**
 * Runs on every API-key request, so it is one indexed statement rather than an ORM find (which
 * costs several times more CPU; see docs/decisions.md).
 */
async function apiKeyPrincipal(em: EntityManager, secret: string): Promise<Principal> {
  const [key] = await em
    .getConnection()
    .execute<{ id: string; workspace_id: string }[]>('select id, workspace_id from api_keys where key_hash = ? and revoked_at is null', [
      sha256(secret),
    ]);
  if (!key) throw new AppError('INVALID_TOKEN', 'The API key is invalid or has been revoked');
  return { type: 'api_key', id: key.id, workspaceId: key.workspace_id, grants: ['*'] };
}

/**
 * Resolves the caller from the bearer credential: a secret API key (`sk_…`) or a user's access token.
 * Bad, expired or revoked credentials are INVALID_TOKEN.
 */
export async function authenticate(em: EntityManager, authorization: string | null): Promise<Principal> {
  const token = bearerToken(authorization);
  if (token.startsWith('sk_')) return apiKeyPrincipal(em, token);
  throw new AppError('INVALID_TOKEN', 'The access token is invalid, expired or revoked');
}
