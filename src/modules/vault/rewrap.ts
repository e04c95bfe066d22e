import type { MikroORM } from '@mikro-orm/postgresql';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { rewrapVault } from './vault.service.ts';

/** The columns sealed directly under the master key (not envelopes), each with its table's key column. */
export const SEALED_COLUMNS = [
  { table: 'signing_keys', id: 'id', column: 'private_jwk', workspaceScoped: false },
  { table: 'mfa_factors', id: 'id', column: 'secret', workspaceScoped: true },
  { table: 'sso_connections', id: 'id', column: 'secret_sealed', workspaceScoped: true },
  { table: 'social_providers', id: 'id', column: 'secret_sealed', workspaceScoped: true },
  { table: 'external_sign_ins', id: 'id', column: 'flow_sealed', workspaceScoped: true },
  { table: 'webhook_endpoints', id: 'id', column: 'secret_sealed', workspaceScoped: true },
] as const;

export type SealedColumn = (typeof SEALED_COLUMNS)[number];

/**
 * Re-seals one column's values that do not open with the current master key (they were sealed under
 * a previous one), in batches of 200. `workspaceId` limits it to one workspace where the table has one.
 */
export async function resealColumn(orm: MikroORM, box: CryptoBox, target: SealedColumn, workspaceId?: string): Promise<number> {
  const conn = orm.em.getConnection();
  const scoped = workspaceId !== undefined && target.workspaceScoped;
  let resealed = 0;
  let after = '';
  for (;;) {
    const rows = await conn.execute<{ id: string; sealed: string }[]>(
      `select ${target.id} as id, ${target.column} as sealed from ${target.table}
        where ${target.id} > ? and ${target.column} is not null${scoped ? ' and workspace_id = ?' : ''}
        order by ${target.id} limit 200`,
      scoped ? [after, workspaceId] : [after],
    );
    if (rows.length === 0) return resealed;
    for (const row of rows) {
      if (box.isCurrent(row.sealed)) continue;
      const fresh = box.seal(box.open(row.sealed));
      await conn.execute(`update ${target.table} set ${target.column} = ? where ${target.id} = ? and ${target.column} = ?`, [
        fresh,
        row.id,
        row.sealed,
      ]);
      resealed += 1;
    }
    after = (rows.at(-1) as { id: string }).id;
  }
}

/**
 * `npm run cli -- keys rewrap`, the last step of a master-key rotation: vault data keys are rewrapped
 * and the other sealed secrets re-sealed under VAULT_MASTER_KEY, opening the old ones with
 * VAULT_MASTER_KEY_PREVIOUS. Idempotent; safe while the service runs.
 */
export async function rewrapAll(orm: MikroORM, box: CryptoBox): Promise<Record<string, number>> {
  const counts: Record<string, number> = { vault_objects: await rewrapVault(orm, box) };
  for (const target of SEALED_COLUMNS) counts[target.table] = await resealColumn(orm, box, target);
  return counts;
}
