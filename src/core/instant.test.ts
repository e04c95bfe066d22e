import { describe, expect, it } from 'vitest';
import { isoOf } from './instant.ts';

/** What every view answered before isoOf: the parse of JavaScript's Date, or the error it throws. */
function parsed(value: Date | string): string {
  try {
    return new Date(value).toISOString();
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

function ours(value: Date | string): string {
  try {
    return isoOf(value);
  } catch (error) {
    return `throws ${(error as Error).name}`;
  }
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** PostgreSQL's text of a timestamptz, with `fraction` digits after the second (none when empty) and an offset. */
function pgText(y: number, mo: number, d: number, h: number, mi: number, s: number, fraction: string, offset = '+00'): string {
  return `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}${fraction ? `.${fraction}` : ''}${offset}`;
}

describe('isoOf', () => {
  it('answers what new Date(value).toISOString() answers, for every form PostgreSQL writes and the ones it does not', () => {
    const values: (string | Date)[] = [];
    // Each fraction length 0 to 6 (PostgreSQL drops trailing zeros), on days across the calendar.
    const fractions = ['', '5', '05', '999', '0001', '49999', '999999', '123456', '000001', '9', '1234567'];
    for (const year of [1000, 1582, 1899, 1900, 1970, 1999, 2000, 2024, 2026, 2100, 2400, 9999]) {
      for (let month = 1; month <= 12; month++) {
        for (const day of [1, 9, 10, 28, 29, 30, 31]) {
          for (const [i, fraction] of fractions.entries()) {
            values.push(pgText(year, month, day, (i * 5) % 24, (i * 13) % 60, (i * 29) % 60, fraction));
          }
        }
      }
    }
    // Ends of the day and of the fields, and values no column holds: rolled over, refused or parsed otherwise.
    values.push(
      pgText(2026, 11, 28, 0, 0, 0, ''),
      pgText(2026, 11, 28, 23, 59, 59, '999999'),
      pgText(2026, 11, 28, 24, 0, 0, ''),
      pgText(2026, 11, 28, 23, 60, 0, ''),
      pgText(2026, 11, 28, 23, 59, 60, ''),
      pgText(2026, 13, 1, 0, 0, 0, ''),
      pgText(2026, 0, 1, 0, 0, 0, ''),
      pgText(2026, 1, 0, 0, 0, 0, ''),
      pgText(2026, 1, 32, 0, 0, 0, ''),
      pgText(2023, 2, 29, 0, 0, 0, ''),
      pgText(1900, 2, 29, 0, 0, 0, ''),
      pgText(2000, 2, 29, 0, 0, 0, ''),
      pgText(2026, 4, 31, 0, 0, 0, ''),
      // Years JavaScript's parser reads otherwise (0050 is 1950) or writes otherwise (+010000).
      pgText(1, 1, 1, 0, 0, 0, ''),
      pgText(50, 1, 1, 0, 0, 0, ''),
      pgText(999, 12, 31, 23, 59, 59, '999'),
      '10000-01-01 00:00:00+00',
      '0001-01-01 00:00:00+00 BC',
      // Another session time zone, other spellings of UTC, ISO text, nonsense.
      pgText(2026, 11, 28, 6, 30, 24, '494', '+05:30'),
      pgText(2026, 11, 28, 6, 30, 24, '494', '-08'),
      pgText(2026, 11, 28, 6, 30, 24, '494', '+00:00'),
      pgText(2026, 11, 28, 6, 30, 24, '494', 'Z'),
      pgText(2026, 11, 28, 6, 30, 24, '494', ''),
      '2026-11-28 06:30:24.+00',
      '2026-11-28T06:30:24.494+00',
      '2026-11-28T06:30:24.494Z',
      '2026-11-28 06:30:24.494+00 ',
      ' 2026-11-28 06:30:24.494+00',
      'infinity',
      '-infinity',
      '',
      new Date('2026-11-28T06:30:24.494Z'),
      new Date(Number.NaN),
    );
    const differing = values.filter((value) => ours(value) !== parsed(value)).map((value) => [value, ours(value), parsed(value)]);
    expect(differing).toEqual([]);
    expect(values.length).toBeGreaterThan(10_000);
  });

  it('writes the milliseconds cut, not rounded, and pads them', () => {
    expect(isoOf('2026-11-28 06:30:24.999999+00')).toBe('2026-11-28T06:30:24.999Z');
    expect(isoOf('2026-11-28 06:30:24.5+00')).toBe('2026-11-28T06:30:24.500Z');
    expect(isoOf('2026-11-28 06:30:24+00')).toBe('2026-11-28T06:30:24.000Z');
    expect(isoOf('2028-02-29 23:59:59.01+00')).toBe('2028-02-29T23:59:59.010Z');
  });
});
