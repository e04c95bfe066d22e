import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { grantsAll } from '../../core/permissions.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { ApiKey } from './api-key.entity.ts';
import type { ApiKeyView } from './api-keys.schema.ts';

function toView(key: ApiKey): ApiKeyView {
  return { id: key.id, name: key.name, prefix: key.prefix, created_at: key.createdAt.toISOString() };
}

/** Makes a key (or stores a chosen one, for bootstrap) and returns its secret once. */
export function issueApiKey(em: EntityManager, workspaceId: string, name: string, chosenSecret?: string) {
  const secret = chosenSecret ?? newSecret('sk_');
  const key = Object.assign(new ApiKey(), {
    id: newId('key'),
    workspaceId,
    name,
    prefix: secret.slice(0, 10),
    keyHash: sha256(secret),
    createdAt: new Date(),
    revokedAt: null,
  });
  em.persist(key);
  return { key, secret };
}

/**
 * A key acts with admin rights, so only a caller who holds every permission (an owner, an admin,
 * another key) may make one: `api_keys:write` alone would be a way to everything.
 */
export async function createApiKey(scope: AuditScope, principal: Principal, name: string) {
  if (!grantsAll(principal.grants)) {
    throw new AppError('FORBIDDEN', 'An API key acts with admin rights: only an owner or an admin may create one');
  }
  const { key, secret } = issueApiKey(scope.em, scope.workspaceId, name);
  recordAudit(scope, { eventType: 'api_key.create', target: { type: 'api_key', id: key.id } });
  await scope.em.flush();
  return { ...toView(key), key: secret };
}

/** Live (unrevoked) keys, a page at a time, by id. */
export async function listApiKeys(em: EntityManager, query: PageQuery) {
  const [keys, total] = await em.findAndCount(ApiKey, { revokedAt: null }, { orderBy: { id: 'asc' }, ...offsetOf(query) });
  return toPage(keys.map(toView), total, query);
}

export async function revokeApiKey(scope: AuditScope, id: string) {
  // Locked: of two revokes at once, the second waits, then finds the key revoked (404), as it would after.
  const key = isId('key', id) ? await scope.em.findOne(ApiKey, { id, revokedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
  if (!key) throw new AppError('NOT_FOUND', 'No such API key');
  key.revokedAt = new Date();
  recordAudit(scope, { eventType: 'api_key.revoke', target: { type: 'api_key', id: key.id } });
  await scope.em.flush();
  return { id: key.id, deleted: true as const };
}
