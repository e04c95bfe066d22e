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

/*
 * PostgreSQL's text for a timestamptz in a UTC session (`2026-11-28 06:30:24.494123+00`), taken apart
 * without a Date: year 1000 to 9999, a real time of day, 0 to 6 decimals, offset +00. Anything else
 * (another session time zone, a year JavaScript's parser reads otherwise, BC, infinity) goes the
 * slow way.
 */
const PG_UTC_TIMESTAMP = /^[1-9]\d{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]) (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?\+00$/;

/** Whether `text` (matched by PG_UTC_TIMESTAMP) names a day its month has: days 29 to 31 are checked. */
function dayExists(text: string): boolean {
  const day = Number(text.slice(8, 10));
  if (day <= 28) return true;
  const month = Number(text.slice(5, 7));
  if (month !== 2) return day <= (month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31);
  const year = Number(text.slice(0, 4));
  return day === 29 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * A timestamp as a statement hands it back (text, the ORM's driver parses none) or a Date, in ISO 8601
 * UTC with milliseconds: exactly `new Date(value).toISOString()`, which it was. Parsing PostgreSQL's
 * text with `new Date` goes through JavaScript's legacy date parser, about 1 µs a value; a users page
 * has three timestamps a row. The common form (a UTC session, years 1000–9999) is rewritten as text
 * instead, the fraction cut to milliseconds as the parser cuts it; every other form is parsed.
 */
export function isoOf(value: Date | string): string {
  if (typeof value === 'string' && PG_UTC_TIMESTAMP.test(value) && dayExists(value)) {
    // `2026-11-28 06:30:24.494123+00`: the fraction, if any, runs from index 20 to the offset.
    const fraction = value.length > 22 ? value.slice(20, Math.min(value.length - 3, 23)) : '';
    return `${value.slice(0, 10)}T${value.slice(11, 19)}.${fraction.padEnd(3, '0')}Z`;
  }
  return new Date(value).toISOString();
}
