import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  createVaultObjectInput,
  listVaultInput,
  revealedOutput,
  vaultObjectIdInput,
  vaultObjectOutput,
  vaultPage,
} from './vault.schema.ts';
import { createVaultObject, deleteVaultObject, getVaultObject, listVaultObjects, revealVaultObject } from './vault.service.ts';

const tags = ['vault'];

export const vaultRouter = router({
  list: managementProcedure('vault:read')
    .meta({
      openapi: { method: 'GET', path: '/api/v1/vault/objects/', tags, summary: 'List stored secrets (metadata only)', protect: true },
    })
    .input(listVaultInput)
    .output(vaultPage)
    .query(({ ctx, input }) => listVaultObjects(ctx.em, input)),

  create: managementProcedure('vault:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/vault/objects/',
        tags,
        summary: 'Store a secret (the answer never holds it)',
        protect: true,
      },
      successStatus: 201,
      audit: 'vault.create',
      conflict: 'A vault object with this name exists already',
    })
    .input(createVaultObjectInput)
    .output(vaultObjectOutput)
    .mutation(({ ctx, input }) => createVaultObject(auditScope(ctx), ctx.deps.box, input, ctx.deps.clock.now())),

  get: managementProcedure('vault:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/vault/objects/{id}', tags, summary: "A stored secret's metadata", protect: true } })
    .input(vaultObjectIdInput)
    .output(vaultObjectOutput)
    .query(({ ctx, input }) => getVaultObject(ctx.em, input.id)),

  /**
   * A GET, as the spec has it, that writes its audit row before it answers (Cache-Control: no-store).
   * A refused reveal (a viewer's 403, an unknown id) is audited too, naming the object when it is one
   * of the caller's workspace: reading a secret's value is what an audit log is for.
   */
  reveal: managementProcedure('vault:reveal')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/vault/objects/{id}/reveal',
        tags,
        summary: "Read a secret's value (owners, admins, API keys); every reveal is audited, refused ones too",
        protect: true,
      },
      audit: 'vault.reveal',
    })
    .input(vaultObjectIdInput)
    .output(revealedOutput)
    .query(({ ctx, input }) => revealVaultObject(auditScope(ctx), ctx.deps.box, input.id)),

  delete: managementProcedure('vault:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/vault/objects/{id}', tags, summary: 'Delete a stored secret', protect: true },
      audit: 'vault.delete',
    })
    .input(vaultObjectIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteVaultObject(auditScope(ctx), input.id)),
});
