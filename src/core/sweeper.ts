import type { MikroORM } from '@mikro-orm/postgresql';
import { HOUR, type Clock } from './clock.ts';
import type { Logger } from './logger.ts';
import { Poller } from './poller.ts';
import { runStatement, type Statement } from './sql.ts';

/**
 * Rows that nothing reads any more (ended sessions and their refresh tokens, expired challenges and
 * links, sent mail, old deliveries…), deleted a while after they stopped mattering. Each module
 * declares the sweeps of its own tables with `sweepOf`; src/retention.ts lists them.
 */
export interface Sweep {
  /** The table swept, for the log and the round's counts. */
  table: string;
  /** Deletes at most `batch` rows done with before `$1` (a timestamp), `returning 1`. */
  statement: Statement;
  /** How long a row is kept once it is done with; `$1` is now less this. */
  keepMs: number;
  batch: number;
}

export interface SweepOptions {
  /** Rows per statement: smaller for rows whose deletion cascades to many others. Default 5,000. */
  batch?: number;
  /**
   * Find the rows through each workspace's `(workspace_id, created_at)` index instead of scanning the
   * table: for tables that take a row per sign-in, too large to scan every hour.
   */
  byWorkspace?: boolean;
  /**
   * The indexed expression `doneBefore` bounds (`least(ended_at, expires_at)`, `expires_at`…): rows
   * are picked in its order, oldest first, so the plan walks that index whatever the cutoff. Without
   * an order, the prepared statement's generic plan (which knows no cutoff, so guesses a third of the
   * table is due) scans the table, and so may a plan for a cutoff that admits many rows.
   */
  doneAt?: string;
}

/**
 * The sweep of `table`'s rows for which `doneBefore` (SQL over the row, with `$1` the cutoff) holds.
 * Rows are picked `for update skip locked`, so instances sweeping at once do not wait for each other,
 * and deleted by their `ctid`s, gathered into an array first: a TID scan reads just the pages of the
 * rows picked. Joined back by key instead (`where id in (select …)`), a plan made for a full batch
 * (the generic plan always is) hashed the batch and scanned the whole table to delete the few rows of
 * a short batch, as every round's last batch is. A row picked is locked, so its `ctid` holds until the
 * delete; one updated between the statement's start and the lock may be skipped until the next round.
 */
export function sweepOf(table: string, doneBefore: string, keepMs: number, options: SweepOptions = {}): Sweep {
  const batch = options.batch ?? 5000;
  const order = options.doneAt ? ` order by ${options.doneAt}` : '';
  const picked = options.byWorkspace
    ? `select old.ctid from workspaces w
        cross join lateral (select ctid from ${table} where workspace_id = w.id and ${doneBefore}${order}
                             limit ${batch} for update skip locked) old
        limit ${batch}`
    : `select ctid from ${table} where ${doneBefore}${order} limit ${batch} for update skip locked`;
  return {
    table,
    statement: { name: `sweep_${table}`, text: `delete from ${table} where ctid = any(array(${picked})) returning 1 as n` },
    keepMs,
    batch,
  };
}

const EVERY_MS = HOUR;

/**
 * Runs every sweep once an hour (the first round an hour after start), each a batch at a time until a
 * batch comes back short, so no statement holds locks for long. Several instances may sweep at once.
 */
export class Sweeper {
  private readonly poller: Poller;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly sweeps: readonly Sweep[],
  ) {
    this.poller = new Poller(
      async () => {
        await this.round();
      },
      EVERY_MS,
      (error) => this.log.error('retention sweep failed', { error }),
    );
  }

  start(): void {
    this.poller.start({ immediately: false });
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /** One round now, after the background one (if any) ends; answers how many rows each sweep deleted. */
  async sweep(): Promise<Record<string, number>> {
    await this.poller.idle();
    return this.round();
  }

  private async round(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const sweep of this.sweeps) {
      const before = new Date(this.clock.now().getTime() - sweep.keepMs).toISOString();
      let total = 0;
      try {
        for (;;) {
          const rows = await runStatement(this.orm, sweep.statement, [before]);
          total += rows.length;
          if (rows.length < sweep.batch) break;
        }
      } catch (error) {
        // One table's failure (a lock timeout, the database going away) leaves the others to be swept.
        this.log.error('retention sweep failed', { table: sweep.table, deleted: total, error });
      }
      deleted[sweep.table] = total;
    }
    const swept = Object.entries(deleted).filter(([, n]) => n > 0);
    if (swept.length > 0) this.log.info('retention sweep', Object.fromEntries(swept));
    return deleted;
  }
}
