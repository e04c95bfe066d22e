import type { MikroORM } from '@mikro-orm/postgresql';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from '../../core/logger.ts';
import { Poller } from '../../core/poller.ts';

const POLL_MS = 2_000;
const MAX_ATTEMPTS = 6;
const BATCH = 20;

interface PendingRow {
  id: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  attempts: number;
}

/**
 * Sends the outbox: over SMTP when SMTP_URL is set, otherwise into the log (so a developer can follow
 * reset links locally). Rows are claimed with `FOR UPDATE SKIP LOCKED`, so several instances share the
 * work; bodies are emptied once sent, so no reset link outlives its delivery in the database.
 */
export class EmailDispatcher {
  private readonly transport: Transporter | null;
  private readonly poller: Poller;

  constructor(
    private readonly orm: MikroORM,
    private readonly log: Logger,
    smtpUrl: string | undefined,
    private readonly from: string,
  ) {
    this.transport = smtpUrl ? nodemailer.createTransport(smtpUrl) : null;
    this.poller = new Poller(
      () => this.drain(),
      POLL_MS,
      (error) => this.log.error('email dispatch failed', { error }),
    );
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller.stop();
    this.transport?.close();
  }

  /** Sends what is pending now (called after a commit that queued mail, and on a timer). */
  kick(): void {
    this.poller.kick();
  }

  /**
   * Sends what is pending now, in turn with the background rounds (the timer's, a commit's): resolves
   * once the round in progress, if any, and then its own have ended, every mail they claimed sent or
   * rescheduled. Tests call it rather than waiting a while for a mail that must not come.
   */
  async tick(): Promise<void> {
    await this.poller.runNow();
  }

  private async drain(): Promise<void> {
    for (;;) {
      const rows = await this.claim();
      for (const row of rows) await this.deliver(row);
      if (rows.length < BATCH) return;
    }
  }

  /**
   * Leases a batch for five minutes in one short statement; sending happens outside any transaction
   * (the embedded database has one connection). A crash mid-send means a retry after the lease.
   */
  private claim(): Promise<PendingRow[]> {
    return this.orm.em.getConnection().execute<PendingRow[]>(
      `update email_outbox set next_attempt_at = now() + interval '5 minutes'
       where id in (select id from email_outbox where status = 'pending' and next_attempt_at <= now()
                    order by next_attempt_at limit ? for update skip locked)
       returning id, to_address, subject, text_body, html_body, attempts`,
      [BATCH],
    );
  }

  private async deliver(row: PendingRow): Promise<void> {
    const conn = this.orm.em.getConnection();
    try {
      if (this.transport) {
        await this.transport.sendMail({
          from: this.from,
          to: row.to_address,
          subject: row.subject,
          text: row.text_body,
          html: row.html_body ?? undefined,
        });
      } else {
        this.log.info('email (no SMTP_URL: logged, not sent)', { to: row.to_address, subject: row.subject, text: row.text_body });
      }
      await conn.execute(
        `update email_outbox set status = 'sent', sent_at = now(), attempts = attempts + 1, text_body = '', html_body = null where id = ?`,
        [row.id],
      );
    } catch (error) {
      const attempts = row.attempts + 1;
      const failed = attempts >= MAX_ATTEMPTS;
      this.log.warn('email delivery failed', { id: row.id, attempts, error: error instanceof Error ? error.message : String(error) });
      await conn.execute(
        `update email_outbox set attempts = ?, last_error = ?, status = ?, next_attempt_at = now() + (? * interval '1 second') where id = ?`,
        [
          attempts,
          error instanceof Error ? error.message.slice(0, 500) : 'unknown',
          failed ? 'failed' : 'pending',
          5 * 4 ** attempts,
          row.id,
        ],
      );
    }
  }
}
