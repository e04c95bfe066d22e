interface Pending<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

/** At most this many calls in one run; a larger batch is split. */
const MAX_BATCH = 100;

/**
 * Coalesces the calls made in the same turn of the event loop into one run over all their inputs:
 * one statement (and one commit) for every request read in the same poll of the sockets, instead of
 * one each. `run` answers one output per input, in order, and must be all or nothing (a single
 * statement is): when a run of several fails, each of its calls is run again alone, so one call's
 * error (or a deadlock between two batches) fails only that call.
 */
export class BatchedCall<In, Out> {
  private pending: Pending<In, Out>[] = [];
  private scheduled = false;

  /**
   * @param run answers one output per input, in order.
   * @param onBatch told how many calls each run answers (for metrics; a failed batch's calls, run
   *   again one by one, are told again).
   */
  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly onBatch: (calls: number) => void = () => undefined,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.dispatch());
      }
    });
  }

  private dispatch(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    for (let start = 0; start < batch.length; start += MAX_BATCH) void this.settle(batch.slice(start, start + MAX_BATCH));
  }

  private async settle(batch: Pending<In, Out>[]): Promise<void> {
    let outputs: Out[];
    this.onBatch(batch.length);
    try {
      outputs = await this.run(batch.map((call) => call.input));
    } catch (error) {
      if (batch.length === 1) (batch[0] as Pending<In, Out>).reject(error);
      else await Promise.all(batch.map((call) => this.settle([call])));
      return;
    }
    batch.forEach((call, i) => call.resolve(outputs[i] as Out));
  }
}
