interface Waiter<Row> {
  resolve: (row: Row | undefined) => void;
  reject: (error: unknown) => void;
}

/** At most this many keys in one statement; a larger batch is split. */
const MAX_BATCH = 200;

/**
 * Coalesces lookups by key that arrive in the same turn of the event loop into one statement (the
 * credential checks every request makes). Each lookup is still issued after its request arrived, so
 * it sees every change committed before then: a revoked session or key is refused at once. What it
 * saves is a database round trip per request under load: one write, one read and one statement run
 * for every request read in the same poll of the sockets.
 */
export class BatchedLookup<Row> {
  private pending = new Map<string, Waiter<Row>[]>();
  private scheduled = false;

  /**
   * @param fetch reads the rows for these keys; a key with no row is absent from the map.
   * @param onBatch told how many lookups each statement answers (for metrics).
   */
  constructor(
    private readonly fetch: (keys: string[]) => Promise<Map<string, Row>>,
    private readonly onBatch: (lookups: number) => void = () => undefined,
  ) {}

  load(key: string): Promise<Row | undefined> {
    return new Promise((resolve, reject) => {
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.dispatch());
      }
    });
  }

  private dispatch(): void {
    const batch = [...this.pending];
    this.pending = new Map();
    this.scheduled = false;
    for (let start = 0; start < batch.length; start += MAX_BATCH) void this.run(batch.slice(start, start + MAX_BATCH));
  }

  private async run(batch: [string, Waiter<Row>[]][]): Promise<void> {
    this.onBatch(batch.reduce((sum, [, waiters]) => sum + waiters.length, 0));
    try {
      const rows = await this.fetch(batch.map(([key]) => key));
      for (const [key, waiters] of batch) for (const waiter of waiters) waiter.resolve(rows.get(key));
    } catch (error) {
      for (const [, waiters] of batch) for (const waiter of waiters) waiter.reject(error);
    }
  }
}

/** Rows as a map for `BatchedLookup`: each under the key its lookup asked for. */
export function keyedBy<Row>(rows: Row[], key: (row: Row) => string): Map<string, Row> {
  return new Map(rows.map((row) => [key(row), row]));
}

/** One value per owner (an app's deps, an ORM), made on first use: tests run several apps in one process. */
export function perOwner<Owner extends object, Value>(make: (owner: Owner) => Value): (owner: Owner) => Value {
  const made = new WeakMap<Owner, Value>();
  return (owner) => {
    let value = made.get(owner);
    if (value === undefined) {
      value = make(owner);
      made.set(owner, value);
    }
    return value;
  };
}
