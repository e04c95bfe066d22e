/**
 * A bounded map whose entries expire: what this process has already checked and may trust until a
 * given time (a token's verified signature, a workspace found to exist). At most `max` entries; when
 * full, the oldest goes first. An expired entry is dropped when it is read.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; untilMs: number }>();

  constructor(private readonly max: number) {}

  get(key: string, nowMs: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.untilMs > nowMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, untilMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, untilMs });
  }
}
