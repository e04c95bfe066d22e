/**
 * Runs one background job on a timer and on demand (`kick`, after a commit that queued work): never
 * two rounds at once, and a kick during a round asks for one more round after it. The outboxes (email,
 * webhooks) use it; what a round does is theirs.
 */
export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly round: () => Promise<void>,
    private readonly everyMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs a round now and then on the timer; `immediately: false` waits for the first tick. */
  start(options: { immediately: boolean } = { immediately: true }): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.everyMs);
    this.timer.unref();
    if (options.immediately) this.kick();
  }

  /** Stops the timer and waits for the round in progress, if any. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Resolves once no round is running (a caller about to run one itself waits for it). */
  async idle(): Promise<void> {
    await this.running;
  }

  /** Whether a round is running (or, after a kick during it, about to run again). */
  get busy(): boolean {
    return this.running !== null;
  }

  /**
   * One round now, in turn with the background ones: it waits for the round in progress, and a kick
   * (the timer, a commit) while it runs waits for it. Resolves when it ends, rejects with its error.
   */
  async runNow(): Promise<void> {
    while (this.running) await this.running;
    await this.begin();
  }

  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    void this.begin().catch(this.onError);
  }

  /** Starts a round as the running one; after it, one more if a kick came meanwhile. */
  private begin(): Promise<void> {
    const round = this.round();
    // The caller reports the round's error (kick to onError, runNow to its awaiter); what waits on
    // `running` only waits for the round's end.
    this.running = round
      .catch(() => undefined)
      .finally(() => {
        this.running = null;
        if (this.again && this.timer) {
          this.again = false;
          this.kick();
        }
      });
    return round;
  }
}
