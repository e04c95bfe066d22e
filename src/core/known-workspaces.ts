/**
 * Workspace ids this process has seen to exist, each remembered for a minute. The sign-in and the
 * forgotten-password calls name their workspace in `X-Tenant-ID`, and asking the database whether it
 * exists was a round trip of every sign-in (one in four). The service never deletes a workspace;
 * should an operator remove one by hand, other instances answer as for a wrong password (not 404)
 * until their minute is up. Ids not found are never remembered: a workspace created a moment ago is
 * found at once.
 */
export class KnownWorkspaces {
  /** id → when it must be checked again (ms); insertion order is age, so the oldest go first. */
  private readonly until = new Map<string, number>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = 60_000,
    private readonly max = 10_000,
  ) {}

  /** Whether `id` exists, asking `lookup` (the database) only when it is not remembered. */
  async exists(id: string, lookup: (id: string) => Promise<boolean>): Promise<boolean> {
    const until = this.until.get(id);
    if (until !== undefined && until > this.now()) return true;
    const found = await lookup(id);
    this.until.delete(id);
    if (found) {
      if (this.until.size >= this.max) this.until.delete(this.until.keys().next().value as string);
      this.until.set(id, this.now() + this.ttlMs);
    }
    return found;
  }
}
