import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Clock } from '../../core/clock.ts';
import type { Logger } from '../../core/logger.ts';
import { Poller } from '../../core/poller.ts';
import { emitEvent } from '../events/events.ts';

/** How often each instance looks for assignments past their `expires_at`: the lapse's latency. */
const POLL_MS = 1_000;
/** Assignments lapsed in one transaction at most; a round takes batches until one comes back short. */
const BATCH = 200;

/** An assignment deleted because its `expires_at` passed, with its role's key. */
export interface LapsedAssignment {
  workspace_id: string;
  user_id: string;
  role_id: string;
  role: string;
  expires_at: Date | string;
}

/** What a lapse deletes and returns: the assignment and its role's key. */
const RETURNING = 'returning ra.workspace_id, ra.user_id, ra.role_id, r.key as role, ra.expires_at';

/**
 * Tells of a lapsed assignment in the caller's transaction, the one that deleted it: a `role.revoked`
 * event (the revoke's payload with `reason: expired` and the `expires_at`) and a `role.revoke` audit row
 * by the system. Whichever statement deleted the row tells, so the lapse is told once. The event is
 * dated at the `expires_at`, when the grant ended: a grant given again in the same transaction is then
 * told after it (`role.assigned`, dated now), not at the same millisecond in either order.
 */
export function tellLapsed(em: EntityManager, lapsed: LapsedAssignment): void {
  const scope: AuditScope = {
    em,
    workspaceId: lapsed.workspace_id,
    actor: { type: 'system', id: null },
    ip: null,
    userAgent: null,
    requestId: null,
  };
  const expiresAt = new Date(lapsed.expires_at).toISOString();
  const told = { role_id: lapsed.role_id, role: lapsed.role, reason: 'expired', expires_at: expiresAt };
  recordAudit(scope, { eventType: 'role.revoke', target: { type: 'user', id: lapsed.user_id }, details: told });
  emitEvent(scope, 'role.revoked', { user_id: lapsed.user_id, ...told }, new Date(expiresAt));
}

/**
 * Lapses the assignment of `roleId` to `userId` if it has expired, in the caller's transaction: an
 * assignment given again, before the background round got to the old one, first ends the old grant.
 * The delete waits for a round holding the row and then finds it gone, so only one of them tells.
 */
export async function lapseAssignment(em: EntityManager, userId: string, roleId: string, now: Date): Promise<void> {
  const lapsed = await em.execute<LapsedAssignment[]>(
    `delete from role_assignments ra using roles r
      where r.id = ra.role_id and ra.user_id = ? and ra.role_id = ? and ra.expires_at <= ? ${RETURNING}`,
    [userId, roleId, now],
  );
  for (const row of lapsed) tellLapsed(em, row);
}

/**
 * Ends time-bound role assignments once their `expires_at` passes (CONTRACT: they stop granting then,
 * to the second; every reader already leaves them out). Each round deletes the expired assignments and,
 * in the same transaction, writes each one's `role.revoked` event and audit row: a crash loses neither
 * half. Rows are picked `for update skip locked`, so instances running rounds at once share them and
 * each assignment is deleted, and told, by one; a revoke or a new assignment of the same pair takes
 * the row's lock too (roles.service.ts), so a lapse and a revoke never both tell.
 */
export class RoleLapses {
  private readonly poller: Poller;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** After a round that lapsed assignments: their events are waiting in the outbox. */
    private readonly onLapsed: () => void,
  ) {
    this.poller = new Poller(
      async () => {
        await this.round();
      },
      POLL_MS,
      (error) => this.log.error('role lapse failed', { error }),
    );
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /**
   * One round now, in turn with the background ones (one running beside it could lapse at a clock the
   * test has moved since). Tests call it after moving the clock.
   */
  async tick(): Promise<void> {
    await this.poller.runNow();
  }

  private async round(): Promise<void> {
    let total = 0;
    for (;;) {
      const lapsed = await this.lapseBatch(this.clock.now());
      total += lapsed;
      if (lapsed < BATCH) break;
    }
    if (total > 0) {
      this.log.info('role assignments lapsed', { count: total });
      this.onLapsed();
    }
  }

  /** Up to BATCH expired assignments, oldest end first, deleted and told in one transaction. */
  private async lapseBatch(now: Date): Promise<number> {
    return this.orm.em.fork().transactional(async (em) => {
      const lapsed = await em.execute<LapsedAssignment[]>(
        `delete from role_assignments ra using roles r
          where r.id = ra.role_id and ra.expires_at <= ?
            and ra.id = any(array(select id from role_assignments where expires_at <= ?
                                   order by expires_at limit ? for update skip locked))
          ${RETURNING}`,
        [now, now, BATCH],
      );
      for (const row of lapsed) tellLapsed(em, row);
      return lapsed.length;
    });
  }
}
