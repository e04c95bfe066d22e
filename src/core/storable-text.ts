import { AppError } from './errors.ts';

/**
 * Text the database can hold. PostgreSQL text cannot hold NUL, and a lone UTF-16 surrogate has no
 * UTF-8 form (encodeURIComponent throws on it; the driver would silently alter it). Such text names
 * nothing that can exist and is refused as input.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/** The top-level members of an input whose text (in the value, at any depth, or in a key) cannot be stored; '' for the input itself. */
export function unstorableMembers(input: unknown): string[] {
  if (typeof input === 'string') return isStorableText(input) ? [] : [''];
  if (typeof input !== 'object' || input === null) return [];
  return Object.entries(input)
    .filter(([key, value]) => !isStorableText(key) || holdsUnstorableText(value))
    .map(([key]) => key);
}

function holdsUnstorableText(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return !isStorableText(value);
  if (depth > 64 || typeof value !== 'object' || value === null) return false;
  return Object.entries(value).some(([key, item]) => !isStorableText(key) || holdsUnstorableText(item, depth + 1));
}

/** Input text the database cannot hold (NUL, a lone surrogate), named by the members that hold it. */
export class UnstorableTextError extends AppError {
  constructor(readonly members: string[]) {
    super('BAD_REQUEST', 'The request holds text that cannot be stored', {
      details: members.map((member) => ({ path: member, message: 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate' })),
    });
  }
}
