import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Every PostgreSQL advisory lock the service takes, in one table, so that no two share a number:
 * session and transaction locks share one key space (the migrations' lock and the first start's once
 * both were 727001). A new lock takes the next number.
 */
export const ADVISORY_LOCKS = {
  /** Instances started together migrate one at a time (db/database.ts; a session lock). */
  migrations: 727_001,
  /** Creating, rotating and revoking signing keys (auth/signing-keys.ts). */
  signingKeys: 727_002,
  /**
   * An address's invitation and its user, one at a time (invitations/retire.ts; one lock per address,
   * taken before any row: the order is written on `lockAddress`).
   */
  invitationAddress: 727_003,
  /** The first start's workspace (workspaces/bootstrap.ts). */
  bootstrap: 727_004,
  /** A workspace's custom attribute keys, one spelling (in any case) at a time (idp-attributes/idp-attributes.ts). */
  idpAttributeKey: 727_005,
} as const;

/**
 * Holds `lock` until the transaction `em` runs in ends; with `key`, only that key's lock of the class
 * (PostgreSQL's two-part form, the key hashed), so other keys go on.
 */
export async function lockUntilCommit(em: EntityManager, lock: keyof typeof ADVISORY_LOCKS, key?: string): Promise<void> {
  if (key === undefined) await em.execute('select pg_advisory_xact_lock(?)', [ADVISORY_LOCKS[lock]]);
  else await em.execute('select pg_advisory_xact_lock(?, hashtext(?))', [ADVISORY_LOCKS[lock], key]);
}
