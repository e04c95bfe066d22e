import { randomFillSync } from 'node:crypto';

/**
 * Opaque, time-ordered ids with a type prefix (`usr_01j…`): 48 bits of milliseconds and 80 random
 * bits in Crockford base32, so ids sort by creation and never collide in practice.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export type IdPrefix =
  | 'wsp'
  | 'usr'
  | 'key'
  | 'rol'
  | 'ras'
  | 'evt'
  | 'ses'
  | 'fac'
  | 'inv'
  | 'grp'
  | 'org'
  | 'app'
  | 'whk'
  | 'dlv'
  | 'act'
  | 'vlt'
  | 'dom'
  | 'req'
  | 'rev'
  | 'sgk'
  | 'rtk'
  | 'prt'
  | 'eml'
  | 'chl'
  | 'gmb'
  | 'odm'
  | 'omb'
  | 'sso'
  | 'ptl'
  | 'ida'
  | 'idn'
  | 'spr'
  | 'xsi'
  | 'msg'
  | 'rsk'
  | 'rvi'
  | 'wat'
  | 'etp';

function encodeTime(ms: number): string {
  let out = '';
  let value = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[value % 32] + out;
    value = Math.floor(value / 32);
  }
  return out;
}

/**
 * Random bytes for ids, drawn from the CSPRNG 4 KiB at a time and never reused: a sign-in makes five
 * ids, and a call into OpenSSL per id cost more than encoding them. (Secrets still take their own
 * `randomBytes`, core/secrets.ts.)
 */
const pool = Buffer.alloc(4000);
let poolOffset = pool.length;

function randomChunk(size: number): Buffer {
  if (poolOffset + size > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const chunk = pool.subarray(poolOffset, poolOffset + size);
  poolOffset += size;
  return chunk;
}

function encodeRandom(): string {
  const bytes = randomChunk(10);
  let bits = 0;
  let acc = 0;
  let out = '';
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${encodeTime(Date.now())}${encodeRandom()}`;
}

/**
 * The first 14 characters of an id made now (`rvi_01j…`), for set-based inserts that make many ids
 * in one statement: SQL appends 16 characters of [0-9a-f] (md5 hex is in the alphabet).
 */
export function idStem(prefix: IdPrefix): string {
  return `${prefix}_${encodeTime(Date.now())}`;
}

const SHAPE = /^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` could be an id of this type; anything else is answered NOT_FOUND without a query. */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && SHAPE.test(value);
}
