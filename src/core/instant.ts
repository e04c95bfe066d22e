import { z } from 'zod';

/** The first and last instants a caller may name: the years 0001 to 9999, in UTC (what ISO 8601 and PostgreSQL both read). */
export const EARLIEST_INSTANT = new Date('0001-01-01T00:00:00.000Z');
export const LATEST_INSTANT = new Date('9999-12-31T23:59:59.999Z');

/** `when`, or the earliest instant if it lies before it (a range computed back from a caller's bound). */
export function notBeforeEarliest(when: Date): Date {
  return when < EARLIEST_INSTANT ? EARLIEST_INSTANT : when;
}

function withinYears(text: string): boolean {
  const ms = new Date(text).getTime();
  return ms >= EARLIEST_INSTANT.getTime() && ms <= LATEST_INSTANT.getTime();
}

/**
 * An instant a caller sends (an end date, a due date, a filter bound): an ISO 8601 timestamp with an
 * offset, one without (read as UTC), or a bare date (its first second, UTC); answered as text with
 * its offset. Its UTC year must be 0001 to 9999: `9999-12-31T23:00:00-05:00` is in the year 10000,
 * which JavaScript writes `+010000-…` and PostgreSQL cannot read, so it is a 400, never a 500.
 */
export const instantInput = z
  .union([z.iso.datetime({ offset: true }), z.iso.datetime({ local: true }), z.iso.date()])
  .transform((text) => (/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`))
  .refine(withinYears, { message: 'must fall between the years 0001 and 9999, UTC' });
