import { ExpiringCache } from './expiring-cache.ts';

/**
 * Workspace ids this process has seen to exist, each remembered for a minute. The sign-in and the
 * forgotten-password calls name their workspace in `X-Tenant-ID`, and asking the database whether it
 * exists was a round trip of every sign-in (one in four). The service never deletes a workspace;
 * should an operator remove one by hand, other instances answer as for a wrong password (not 404)
 * until their minute is up. Ids not found are never remembered: a workspace created a moment ago is
 * found at once.
 */
export class KnownWorkspaces {
  private readonly found: ExpiringCache<true>;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly ttlMs = 60_000,
    max = 10_000,
  ) {
    this.found = new ExpiringCache(max);
  }

  /** Whether `id` exists, asking `lookup` (the database) only when it is not remembered. */
  async exists(id: string, lookup: (id: string) => Promise<boolean>): Promise<boolean> {
    if (this.found.get(id, this.now())) return true;
    const exists = await lookup(id);
    if (exists) this.found.set(id, true, this.now() + this.ttlMs);
    return exists;
  }
}
