import fc from 'fast-check';

/**
 * Generated hostile input for property tests. A value is kept as a tree and written out by
 * `toJsonText`, so it can hold what `JSON.stringify` never writes: duplicate keys, number tokens
 * such as `1e309` or `-0`, and keys like `__proto__` as plain members.
 */
export type Junk =
  | { kind: 'text'; value: string }
  | { kind: 'number'; value: number }
  /** A number token written as it is (`1e309` parses to Infinity, `-0` to negative zero). */
  | { kind: 'token'; text: string }
  | { kind: 'literal'; value: boolean | null }
  | { kind: 'array'; items: Junk[] }
  | { kind: 'object'; entries: [string, Junk][] };

/** JSON text of a junk value; object entries are written in order, duplicates included. */
export function toJsonText(value: Junk): string {
  switch (value.kind) {
    case 'text':
      return JSON.stringify(value.value);
    case 'number':
      return JSON.stringify(value.value);
    case 'token':
      return value.text;
    case 'literal':
      return JSON.stringify(value.value);
    case 'array':
      return `[${value.items.map(toJsonText).join(',')}]`;
    case 'object':
      return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  }
}

const char = (min: number, max: number) => fc.integer({ min, max }).map((code) => String.fromCharCode(code));

/** C0 and C1 controls, NUL and DEL included. */
export const controlChar = fc.oneof(char(0x00, 0x1f), char(0x7f, 0x9f));
/** UTF-16 halves without their partner: not valid Unicode, still valid in JSON (`\ud800`). */
export const loneSurrogate = char(0xd800, 0xdfff);
/** Characters that change how text reads or compares: zero-width, bidi overrides, BOM, line separators. */
export const invisibleChar = fc.constantFrom('\u200b', '\u200d', '\u202e', '\u2066', '\ufeff', '\u2028', '\u2029', '\u0301');

/** Strings that look like numbers, ids or special values to a lenient parser. */
export const numberLikeString = fc.constantFrom(
  '1e309',
  '-1e309',
  '-0',
  '0',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '1_000',
  '9007199254740993',
  '1e-400',
  ' 1 ',
  '',
  'true',
  'null',
  'undefined',
  '[object Object]',
);

const shortHostileString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: fc.oneof(controlChar, loneSurrogate, invisibleChar, char(0x20, 0x7e)), maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: numberLikeString },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "' or 1=1 --",
      '%',
      '_',
      '\\',
      '%00',
      '\u0000',
      'a\u0000b',
      '{{constructor.constructor}}',
      '${7*7}',
      '../../etc/passwd',
      '<script>alert(1)</script>',
      'usr_',
      'usr_00000000000000000000000000',
      'javascript:alert(1)',
      'https://127.0.0.1:1/',
      'a@b',
      'x@example.com\r\nBcc: y@example.com',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 2_000 }).map((n) => 'x'.repeat(n)) },
);

/**
 * Text that has broken servers: control characters, lone surrogates, SQL and template syntax, path
 * tricks, and now and then a long string (past every field's limit, up to 70,000 characters).
 */
export const hostileString = fc.oneof(
  { weight: 12, arbitrary: shortHostileString },
  { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 70_000 }).map((n) => 'x'.repeat(n)) },
);

export const numberToken = fc.constantFrom(
  '1e309',
  '-1e309',
  '-0',
  '1E400',
  '-1e-400',
  '123456789012345678901234567890',
  '0.0000000000000000000001',
);

const leaf: fc.Arbitrary<Junk> = fc.oneof(
  { weight: 4, arbitrary: hostileString.map((value): Junk => ({ kind: 'text', value })) },
  { weight: 2, arbitrary: fc.double().map((value): Junk => ({ kind: 'number', value })) },
  { weight: 1, arbitrary: fc.integer().map((value): Junk => ({ kind: 'number', value })) },
  { weight: 2, arbitrary: numberToken.map((text): Junk => ({ kind: 'token', text })) },
  { weight: 2, arbitrary: fc.constantFrom<boolean | null>(true, false, null).map((value): Junk => ({ kind: 'literal', value })) },
);

/** Keys that have poisoned prototypes or confused lookups. */
export const prototypeKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__');

/** Any JSON value, nested a few levels; `keys` are the names an endpoint knows, to get past the first check. */
export function junkValue(keys: readonly string[]): fc.Arbitrary<Junk> {
  const key = fc.oneof(
    ...(keys.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...keys) }] : []),
    { weight: 2, arbitrary: prototypeKey },
    { weight: 1, arbitrary: hostileString },
  );
  return fc.letrec<{ value: Junk; array: Junk; object: Junk }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }).map((items): Junk => ({ kind: 'array', items })),
    object: fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries): Junk => ({ kind: 'object', entries })),
  })).value;
}

/** `depth` arrays or objects inside each other, as JSON text (built iteratively: no recursion limit here). */
export function deeplyNested(depth: number, kind: 'array' | 'object' = 'array'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + 'null' + '}'.repeat(depth);
}

/** Text that is not JSON, or not quite. */
export const malformedJson = fc.oneof(
  fc.constantFrom(
    '{',
    '}',
    '{"a":}',
    '{"a" 1}',
    '[1,]',
    '{"a":1,}',
    "{'a':1}",
    '{"a":undefined}',
    '{"a":NaN}',
    '{"a":Infinity}',
    '{"a":0x10}',
    '{"a":01}',
    '{"a":"\\x41"}',
    '{"a":"\\ud800"',
    '{"a":1}{"b":2}',
    '{"a":1} trailing',
    '//comment\n{}',
    '{"a":"unterminated}',
    '\u0000',
    'null',
    'nul',
    ' ',
  ),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `{"${s}`),
  fc.tuple(fc.string({ maxLength: 20 }), fc.integer({ min: 1, max: 5 })).map(([s, cut]) => `{"k":${JSON.stringify(s)}`.slice(0, -cut)),
);

/** Content types a JSON endpoint must refuse or read as JSON, never crash on. */
export const contentType = fc.constantFrom(
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nope',
  'application/merge-patch+json',
  'application/jsonx',
  'json',
  '*/*',
  '',
);

/**
 * A query-string component: encoded text, or raw percent sequences a decoder may choke on (a
 * truncated escape, bytes that are not UTF-8, an encoded lone surrogate).
 */
export const queryPart = fc.oneof(
  { weight: 4, arbitrary: shortHostileString.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/gu, '\ufffd'))) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%ED%A0%80', '%FF%FE', '%C0%80', '%00', '%2F..%2F', '+', '%u0041', '&&', '==') },
);

/** An id for a path: nothing like an id, nearly one, or a real-looking one of the wrong type. */
export const junkId = fc.oneof(
  queryPart.filter((s) => s.length > 0 && s !== '.' && s !== '..'),
  fc.constantFrom('usr_', 'usr_00000000000000000000000000', 'zzz_01', 'x'.repeat(101), '%2F', '..%2F..', '0', '-1', 'null', '__proto__'),
  fc.stringMatching(/^[a-z]{3}_[0-9a-z]{26}$/),
);
