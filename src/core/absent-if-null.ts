import type { z } from 'zod';

/**
 * An optional field of a create whose resource answers it as nullable (a description, a user's name):
 * `null` is taken as not sent, so a body copied from a GET, or a client that sends every key, creates
 * the same thing as one that leaves the field out. Updates keep `.nullable()`, where `null` clears.
 */
export function absentIfNull<T extends z.ZodType>(schema: T) {
  return schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();
}
