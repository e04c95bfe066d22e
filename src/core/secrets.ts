import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random secret, URL-safe, with a readable type prefix (`sk_…`). */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

/** Tokens, API keys and client secrets are stored as SHA-256 hex digests, never in clear. */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
