import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { VaultObject } from './vault.entity.ts';
import type { CreateVaultObjectInput, VaultObjectView } from './vault.schema.ts';
import { takenConflict } from '../../core/conflicts.ts';

function toView(object: VaultObject): VaultObjectView {
  return {
    id: object.id,
    name: object.name,
    description: object.description,
    created_by: { type: object.createdByType, id: object.createdById },
    created_at: object.createdAt.toISOString(),
    updated_at: object.updatedAt.toISOString(),
  };
}

/** What the value is bound to: a ciphertext moved to another row or workspace does not open. */
function contextOf(object: Pick<VaultObject, 'id' | 'workspaceId'>): string {
  return `${object.workspaceId}/${object.id}`;
}

export async function listVaultObjects(em: EntityManager, query: PageQuery) {
  const [rows, total] = await em.findAndCount(VaultObject, {}, { orderBy: { name: 'asc', id: 'asc' }, ...offsetOf(query) });
  return toPage(rows.map(toView), total, query);
}

async function findObject(em: EntityManager, id: string, withSecret = false): Promise<VaultObject> {
  const object = isId('vlt', id)
    ? await em.findOne(VaultObject, { id }, withSecret ? { populate: ['ciphertext', 'wrappedKey'] } : {})
    : null;
  if (!object) throw new AppError('NOT_FOUND', 'No such vault object');
  return object;
}

export async function getVaultObject(em: EntityManager, id: string): Promise<VaultObjectView> {
  return toView(await findObject(em, id));
}

export async function createVaultObject(scope: AuditScope, box: CryptoBox, input: CreateVaultObjectInput, now: Date) {
  const taken = await scope.em.execute<{ id: string }[]>('select id from vault_objects where workspace_id = ? and lower(name) = lower(?)', [
    scope.workspaceId,
    input.name,
  ]);
  if (taken.length > 0) throw takenConflict('name', 'A vault object with this name already exists');
  const id = newId('vlt');
  const envelope = box.sealEnvelope(input.value, contextOf({ id, workspaceId: scope.workspaceId }));
  const object = Object.assign(new VaultObject(), {
    id,
    workspaceId: scope.workspaceId,
    name: input.name,
    description: input.description ?? null,
    ciphertext: envelope.ciphertext,
    wrappedKey: envelope.wrappedKey,
    keyId: envelope.keyId,
    createdByType: scope.actor.type,
    createdById: scope.actor.id,
    createdAt: now,
    updatedAt: now,
  });
  scope.em.persist(object);
  recordAudit(scope, { eventType: 'vault.create', target: { type: 'vault_object', id }, details: { name: object.name } });
  return toView(object);
}

/**
 * The value, for the few allowed to read it. The audit row is written (and committed) before the
 * value is decrypted: no reveal without its record.
 */
export async function revealVaultObject(scope: AuditScope, box: CryptoBox, id: string) {
  const object = await findObject(scope.em, id, true);
  recordAudit(scope, { eventType: 'vault.reveal', target: { type: 'vault_object', id: object.id }, details: { name: object.name } });
  await scope.em.flush();
  const value = box.openEnvelope({ ciphertext: object.ciphertext, wrappedKey: object.wrappedKey, keyId: object.keyId }, contextOf(object));
  return { id: object.id, name: object.name, value };
}

export async function deleteVaultObject(scope: AuditScope, id: string) {
  const object = await findObject(scope.em, id);
  scope.em.remove(object);
  recordAudit(scope, { eventType: 'vault.delete', target: { type: 'vault_object', id: object.id }, details: { name: object.name } });
  return { id: object.id, deleted: true as const };
}

/**
 * After a master-key rotation: every data key wrapped under another key is unwrapped (with
 * VAULT_MASTER_KEY_PREVIOUS) and wrapped again under the current one, in batches; values are not
 * touched. `workspaceId` limits it to one workspace. Answers how many objects were rewrapped.
 */
export async function rewrapVault(orm: MikroORM, box: CryptoBox, workspaceId?: string): Promise<number> {
  let rewrapped = 0;
  for (;;) {
    const em = orm.em.fork();
    const batch = await em.find(
      VaultObject,
      { keyId: { $ne: box.keyId }, ...(workspaceId ? { workspaceId } : {}) },
      { filters: false, populate: ['ciphertext', 'wrappedKey'], limit: 200, orderBy: { id: 'asc' } },
    );
    if (batch.length === 0) return rewrapped;
    for (const object of batch) {
      const envelope = box.rewrapEnvelope(
        { ciphertext: object.ciphertext, wrappedKey: object.wrappedKey, keyId: object.keyId },
        contextOf(object),
      );
      Object.assign(object, { wrappedKey: envelope.wrappedKey, keyId: envelope.keyId });
    }
    await em.flush();
    rewrapped += batch.length;
  }
}
