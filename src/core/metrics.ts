import type { MikroORM } from '@mikro-orm/postgresql';
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { constantTimeEqual } from './secrets.ts';

/**
 * The route label of requests no route matched (404s, static files): a label per path, or per first
 * segment, would let anyone add series to the registry without end, one made-up path at a time.
 */
const UNMATCHED = '(unmatched)';

/**
 * Prometheus metrics of one process (each app has its own registry, so tests can run several):
 * request rate and latency by route and status, sign-in outcomes, rate-limit refusals, and the
 * webhook and email queues (read from the database when scraped).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = this.counter('http_requests_total', 'HTTP requests by method, route template and status', [
    'method',
    'route',
    'status',
  ]);
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly signIns = this.counter(
    'sign_in_attempts_total',
    'Sign-in attempts by outcome (success, challenge, or the refusal code)',
    ['outcome'],
  );
  private readonly limited = this.counter('rate_limit_hits_total', 'Requests refused by a rate limit, by limit', ['limit']);
  private readonly credentialLookups = this.counter(
    'credential_lookups_total',
    'Credential checks (API keys, access tokens’ sessions) read from the database, by kind',
    ['kind'],
  );
  private readonly credentialStatements = this.counter(
    'credential_lookup_statements_total',
    'Statements that read them: checks arriving together share one, by kind',
    ['kind'],
  );

  private readonly rotations = this.counter('refresh_rotations_total', 'Refresh-token rotations attempted', []);
  private readonly rotationStatements = this.counter(
    'refresh_rotation_statements_total',
    'Statements that ran them: refreshes arriving together share one',
    [],
  );

  constructor(orm: MikroORM) {
    collectDefaultMetrics({ register: this.registry });
    const queue = (name: string, help: string, sql: string) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const [row] = await orm.em.fork().getConnection().execute<{ n: number }[]>(sql);
          this.set(row?.n ?? 0);
        },
      });
    queue(
      'webhook_deliveries_pending',
      'Webhook deliveries waiting for their next attempt',
      `select count(*)::int as n from webhook_deliveries where status = 'pending'`,
    );
    queue(
      'webhook_events_unrouted',
      'Committed events not yet fanned out to endpoints',
      'select count(*)::int as n from events where fanned_out_at is null',
    );
    queue('emails_pending', 'Emails waiting in the outbox', `select count(*)::int as n from email_outbox where status = 'pending'`);
  }

  /** A counter in this process's registry. */
  private counter<Label extends string>(name: string, help: string, labelNames: readonly Label[]): Counter<Label> {
    return new Counter({ name, help, labelNames, registers: [this.registry] });
  }

  signIn(outcome: string): void {
    this.signIns.inc({ outcome });
  }

  /** One statement answered the credential checks of `requests` requests. */
  credentialLookup(kind: 'api_key' | 'session', requests: number): void {
    this.credentialStatements.inc({ kind });
    this.credentialLookups.inc({ kind }, requests);
  }

  /** One statement ran the refreshes of `requests` requests. */
  refreshBatch(requests: number): void {
    this.rotationStatements.inc();
    this.rotations.inc(requests);
  }

  rateLimited(limit: string): void {
    this.limited.inc({ limit });
  }

  /**
   * The request counter's and histogram's series for one method, route and status, made once: labels
   * are bounded (route templates), and looking a series up by its label object on every request cost
   * more than counting.
   */
  private readonly series = new Map<string, { count: () => void; observe: (seconds: number) => void }>();

  private requestSeries(method: string, route: string, status: number) {
    const key = `${method} ${status} ${route}`;
    let found = this.series.get(key);
    if (!found) {
      const labels = { method, route, status: String(status) };
      const counter = this.requests.labels(labels);
      const histogram = this.latency.labels(labels);
      found = { count: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      this.series.set(key, found);
    }
    return found;
  }

  /** Times every request; the route label is the matched template, never the raw path (bounded labels). */
  middleware(): RequestHandler {
    return (req, res, next) => {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const route = (res.locals.route as string | undefined) ?? (req.route?.path as string | undefined) ?? UNMATCHED;
        const series = this.requestSeries(req.method, route, res.statusCode);
        series.count();
        series.observe(Number(process.hrtime.bigint() - started) / 1e9);
      });
      next();
    };
  }

  /** `GET /metrics`, for `Authorization: Bearer $METRICS_TOKEN`; absent (404) when no token is set. */
  handler(token: string | undefined): RequestHandler {
    return async (req, res, next) => {
      try {
        const presented = (req.get('authorization') ?? '').replace(/^Bearer\s+/i, '');
        if (!token) return next();
        if (!constantTimeEqual(presented, token)) {
          res.status(401).set('WWW-Authenticate', 'Bearer').type('text/plain').send('metrics need the METRICS_TOKEN bearer token\n');
          return;
        }
        res.set('Content-Type', this.registry.contentType).send(await this.registry.metrics());
      } catch (error) {
        next(error);
      }
    };
  }
}
