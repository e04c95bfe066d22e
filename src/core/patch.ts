import { isDeepStrictEqual } from 'node:util';
import { AppError } from './errors.ts';

/**
 * The rule every PATCH (and settings PUT) follows: a member changes the resource only when it is sent
 * and differs from what is stored (JSON values, lists included, compared by content). A call that
 * changes nothing, with no members or only current values, writes nothing: 200 with the resource as it
 * is, `updated_at` kept, no audit row and no webhook event.
 */
export function differs<T>(next: T | undefined, current: T): next is T {
  return next !== undefined && !isDeepStrictEqual(next, current);
}

/** Metadata stored on a resource: at most this many bytes once serialised, after a merge too. */
export const METADATA_MAX_JSON = 16_384;

/**
 * Auth0's merge of `user_metadata` / `app_metadata` on PATCH: the patch's top-level keys replace the
 * stored ones, a key set to `null` is removed, and a nested object replaces the stored value whole
 * (no deep merge). The result is held to the size limit (400 on `metadata`), whatever the patch's own
 * size.
 */
export function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  // A Map, so a key such as `__proto__` is a key like any other (never the object's prototype).
  const entries = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) entries.delete(key);
    else entries.set(key, value);
  }
  const merged = Object.fromEntries(entries);
  if (JSON.stringify(merged).length > METADATA_MAX_JSON) {
    throw new AppError('BAD_REQUEST', 'The request is invalid', {
      details: [{ path: 'metadata', message: 'must be at most 16 KiB of JSON once merged with the stored metadata' }],
    });
  }
  return merged;
}
