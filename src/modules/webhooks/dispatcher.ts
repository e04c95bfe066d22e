import type { MikroORM } from '@mikro-orm/postgresql';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../../core/clock.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { idStem, newId } from '../../core/ids.ts';
import type { Logger } from '../../core/logger.ts';
import { Poller } from '../../core/poller.ts';
import { DELIVERY_TIMEOUT_MS, postWebhook, type SendResult, type TargetPolicy } from './sender.ts';

/** After the 1st, 2nd… failed attempt, the next one waits this long; after the last, the delivery fails. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 2 * 60_000, 10 * 60_000, 60 * 60_000, 6 * 60 * 60_000];
/**
 * While one instance sends a delivery, no other claims it. A send takes at most DELIVERY_TIMEOUT_MS
 * (10 s, everything included), so twice that covers the send and its record; it is also how long the
 * deliveries of an instance that died mid-send wait before another instance (or the restarted one)
 * sends them again (test/faults/crash.test.ts; it was a minute).
 */
const LEASE_MS = 2 * DELIVERY_TIMEOUT_MS;
const POLL_MS = 1_000;
/** Sends in flight on one instance at most, and to one endpoint at most. */
const MAX_IN_FLIGHT = 20;
const MAX_IN_FLIGHT_PER_ENDPOINT = 4;

interface DueRow {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  payload: Record<string, unknown>;
  scheduled_attempts: number;
  url: string;
  secret_sealed: string;
}

/**
 * Up to `limit` due deliveries of enabled endpoints, oldest first, none beyond an endpoint's share of
 * the slots (`MAX_IN_FLIGHT_PER_ENDPOINT` less what it has in flight here). The endpoints with pending
 * deliveries are listed by skipping through the pending-by-endpoint index (one probe each), then each
 * gives at most its share, oldest due first: an endpoint's backlog, however long, is never scanned.
 * A disabled endpoint's deliveries, retries included, wait until it is enabled again.
 */
export const CLAIM_DUE = `with recursive waiting as (
    (select endpoint_id from webhook_deliveries where status = 'pending' order by endpoint_id, next_attempt_at limit 1)
    union all
    select (select next.endpoint_id from webhook_deliveries next
             where next.status = 'pending' and next.endpoint_id > w.endpoint_id
             order by next.endpoint_id, next.next_attempt_at limit 1)
      from waiting w where w.endpoint_id is not null
  )
  update webhook_deliveries d set lease_until = ?
    from webhook_endpoints e
   where e.id = d.endpoint_id and d.id in (
         select share.id from waiting w
           join webhook_endpoints live on live.id = w.endpoint_id and live.enabled
          cross join lateral (
                select due.id, due.next_attempt_at from webhook_deliveries due
                 where due.endpoint_id = w.endpoint_id and due.status = 'pending' and due.next_attempt_at <= ?
                   and (due.lease_until is null or due.lease_until < ?)
                 order by due.next_attempt_at
                 limit greatest(0, ? - coalesce((?::jsonb ->> w.endpoint_id)::int, 0))
                 for update of due skip locked) share
          order by share.next_attempt_at limit ?)
   returning d.id, d.workspace_id, d.endpoint_id, d.payload, d.scheduled_attempts, e.url, e.secret_sealed`;

/** The values of CLAIM_DUE's placeholders: the lease, the time, each endpoint's sends in flight here. */
export function claimValues(now: Date, inFlight: ReadonlyMap<string, number>, limit: number): unknown[] {
  return [new Date(now.getTime() + LEASE_MS), now, now, MAX_IN_FLIGHT_PER_ENDPOINT, JSON.stringify(Object.fromEntries(inFlight)), limit];
}

/**
 * Delivers the outbox. Each tick (on a timer, and right after a commit that emitted events) first fans
 * new events out into one delivery per subscribed endpoint, then claims due deliveries with
 * `FOR UPDATE SKIP LOCKED` and a lease, so several instances share the work and a delivery is sent by
 * one of them; an instance killed mid-send leaves a lease that expires, and the delivery is sent again
 * with the same `webhook-id` (at least once). Requests never wait for any of this.
 *
 * A tick does not wait for its sends: each send frees its slot when it ends and asks for another tick,
 * so a receiver that takes its full ten seconds holds one slot, not the whole outbox, and at most four
 * slots go to one endpoint (the others' deliveries keep flowing while it is slow).
 */
export class WebhookDispatcher {
  private readonly poller: Poller;
  /** Sends in flight, and how many of them go to each endpoint. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly perEndpoint = new Map<string, number>();
  private stopping = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly box: CryptoBox,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly policy: TargetPolicy,
  ) {
    this.poller = new Poller(
      () => this.round(),
      POLL_MS,
      (error) => this.log.error('webhook dispatch failed', { error }),
    );
  }

  start(): void {
    this.poller.start();
  }

  /** Stops ticking and waits for the sends in flight. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.poller.stop();
    await this.settled();
  }

  /** Runs a round soon; while one runs, one more follows it. */
  kick(): void {
    this.poller.kick();
  }

  /**
   * One round now, then until the dispatcher is quiet: no round running and no send in flight, every
   * outcome recorded. Tests call it after moving the clock. Its round takes its turn with the
   * background ones (the timer's, a commit's, a finished send's): one running beside it could claim a
   * due delivery first and send it after tick returned, at a clock the test has moved on since.
   */
  async tick(): Promise<void> {
    await this.poller.runNow();
    await this.quiet();
  }

  /**
   * One round now, in turn with the background ones, without waiting for the sends it starts (tick
   * waits for them): a test whose receiver holds a send open checks what the round started.
   */
  async roundNow(): Promise<void> {
    await this.poller.runNow();
  }

  /** Resolves once no round is running; sends may still be in flight. */
  async idle(): Promise<void> {
    await this.poller.idle();
  }

  /** Sends in flight from this instance to the endpoint: a claimed delivery counts from its claim on. */
  sendingTo(endpointId: string): number {
    return this.perEndpoint.get(endpointId) ?? 0;
  }

  /** Waits until no round runs and no send is in flight (a send's end asks for a round, which may send). */
  private async quiet(): Promise<void> {
    for (;;) {
      if (this.inFlight.size > 0) await Promise.all(this.inFlight);
      else if (this.poller.busy) await this.poller.idle();
      else return;
    }
  }

  private async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Fan out, then start sending what is due, as far as free slots allow. */
  private async round(): Promise<void> {
    await this.fanOut();
    for (;;) {
      const free = MAX_IN_FLIGHT - this.inFlight.size;
      if (free <= 0) return;
      const due = await this.claim(free);
      if (due.length === 0) return;
      for (const row of due) this.dispatch(row);
    }
  }

  /** Sends in the background; the slot it frees is filled by the tick it asks for (unless stopping). */
  private dispatch(row: DueRow): void {
    this.perEndpoint.set(row.endpoint_id, (this.perEndpoint.get(row.endpoint_id) ?? 0) + 1);
    const sending = this.send(row)
      .catch((error: unknown) => this.log.error('webhook send failed', { delivery_id: row.id, error }))
      .finally(() => {
        this.inFlight.delete(sending);
        const left = (this.perEndpoint.get(row.endpoint_id) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(row.endpoint_id, left);
        else this.perEndpoint.delete(row.endpoint_id);
        if (!this.stopping) this.poller.kick();
      });
    this.inFlight.add(sending);
  }

  /**
   * One statement for up to 200 new events, whatever the number of endpoints: each event becomes one
   * delivery per enabled endpoint of its workspace that wants its type, and is marked fanned out. Every
   * sign-in emits an event, so a statement per event put one more round trip per sign-in on the
   * database.
   */
  private async fanOut(): Promise<void> {
    const now = this.clock.now();
    await this.orm.em.fork().execute(
      `with due as (
         select id, workspace_id, type, payload, created_at from events where fanned_out_at is null
          order by created_at limit 200 for update skip locked
       ), deliveries as (
         insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event_type, payload, status, attempts, scheduled_attempts,
                                         next_attempt_at, created_at, updated_at)
         select ? || substr(md5(random()::text || ev.id || e.id), 1, 16), ev.workspace_id, e.id, ev.id, ev.type,
                jsonb_build_object('type', ev.type,
                                   'timestamp', to_char(ev.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                                   'data', ev.payload),
                'pending', 0, 0, ?, ?, ?
           from due ev
           join webhook_endpoints e on e.workspace_id = ev.workspace_id and e.enabled
                                   and (jsonb_array_length(e.event_types) = 0 or e.event_types @> jsonb_build_array(ev.type))
         returning 1
       )
       update events set fanned_out_at = ? where id in (select id from due)`,
      [idStem('dlv'), now, now, now, now],
    );
  }

  /** Up to `limit` due deliveries, each endpoint's share at most (CLAIM_DUE). */
  private async claim(limit: number): Promise<DueRow[]> {
    return this.orm.em.fork().execute<DueRow[]>(CLAIM_DUE, claimValues(this.clock.now(), this.perEndpoint, limit));
  }

  private async send(row: DueRow): Promise<void> {
    const body = JSON.stringify(row.payload);
    const sentAt = this.clock.now();
    let result: SendResult;
    try {
      const signature = new Webhook(this.box.open(row.secret_sealed)).sign(row.id, sentAt, body);
      result = await postWebhook(
        row.url,
        { 'webhook-id': row.id, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature },
        body,
        this.policy,
      );
    } catch (error) {
      result = { status: null, durationMs: 0, error: error instanceof Error ? error.message : String(error) };
    }
    await this.record(row, result);
  }

  /** One statement per outcome: the attempt row, the delivery's status and its next attempt. */
  private async record(row: DueRow, result: SendResult): Promise<void> {
    const now = this.clock.now();
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const attempt = row.scheduled_attempts + 1;
    const delay = RETRY_DELAYS_MS[attempt - 1];
    const status = ok ? 'succeeded' : delay === undefined ? 'failed' : 'pending';
    const next = status === 'pending' ? new Date(now.getTime() + (delay as number)) : null;
    await this.orm.em.fork().execute(
      `with attempt as (
         insert into webhook_attempts (id, workspace_id, delivery_id, attempted_at, response_status, duration_ms, error)
         values (?, ?, ?, ?, ?, ?, ?))
       update webhook_deliveries set status = ?, attempts = attempts + 1, scheduled_attempts = ?, response_status = ?,
              next_attempt_at = ?, lease_until = null, updated_at = ?
        where id = ?`,
      [
        newId('wat'),
        row.workspace_id,
        row.id,
        now,
        result.status,
        result.durationMs,
        result.error?.slice(0, 500) ?? null,
        status,
        attempt,
        result.status,
        next,
        now,
        row.id,
      ],
    );
    if (!ok) this.log.warn('webhook attempt failed', { delivery_id: row.id, status: result.status, error: result.error });
  }
}
