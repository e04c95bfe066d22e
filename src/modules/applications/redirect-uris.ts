import type { FieldProblem } from '../../core/errors.ts';
import type { ApplicationType } from './application.entity.ts';

export const MAX_REDIRECT_URIS = 20;
export const MAX_REDIRECT_URI_LENGTH = 2048;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes that run code or read local data in the browser: never a place to send a code. */
const FORBIDDEN_SCHEMES = new Set(['javascript:', 'vbscript:', 'data:', 'blob:', 'file:', 'about:', 'ftp:', 'ws:', 'wss:']);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    // Not an absolute URI: the caller reports it as such.
    return null;
  }
}

/** Why one URI cannot be registered for this type, or null when it can. */
function problemWith(type: ApplicationType, uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `must be at most ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/\s/.test(uri)) return 'must not contain whitespace';
  const url = parse(uri);
  if (!url) return 'must be an absolute URI';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (uri.includes('*')) return 'must not contain wildcards';
  if (url.username || url.password) return 'must not contain user information';
  const loopback = LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol === 'https:') {
    if (type === 'native' && loopback) return 'a native app on a loopback address uses http (RFC 8252)';
    return null;
  }
  if (url.protocol === 'http:') return loopback ? null : 'must use https (http only on localhost, 127.0.0.1 or [::1])';
  if (type !== 'native') return 'must use https (http only on localhost, 127.0.0.1 or [::1])';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `must not use the ${url.protocol.slice(0, -1)} scheme`;
  return null;
}

/**
 * The redirect URIs an application may register (docs/decisions.md): absolute, no fragment, no
 * wildcard, no user information; https, or http on a loopback address; native apps may also use a
 * private-use scheme (`com.example.app:/callback`). Machine-to-machine apps have none; every other
 * type needs at least one. Matching at `/oauth/authorize` is then by exact string.
 */
export function redirectUriProblems(type: ApplicationType, uris: readonly string[]): FieldProblem[] {
  if (type === 'm2m') {
    return uris.length > 0 ? [{ path: 'redirect_uris', message: 'machine-to-machine applications have no redirect URIs' }] : [];
  }
  if (uris.length === 0) return [{ path: 'redirect_uris', message: `a ${type} application needs at least one redirect URI` }];
  return listProblems(type, uris, 'redirect_uris');
}

/**
 * The URIs RP-initiated logout may send people back to (`post_logout_redirect_uris`, Auth0's "allowed
 * logout URLs"): the same rules as redirect URIs, and none is needed. Machine-to-machine apps sign
 * nobody in, so they have none.
 */
export function postLogoutRedirectUriProblems(type: ApplicationType, uris: readonly string[]): FieldProblem[] {
  if (type === 'm2m') {
    return uris.length > 0
      ? [{ path: 'post_logout_redirect_uris', message: 'machine-to-machine applications sign nobody in and have no logout URIs' }]
      : [];
  }
  return listProblems(type, uris, 'post_logout_redirect_uris');
}

function listProblems(type: ApplicationType, uris: readonly string[], field: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  uris.forEach((uri, index) => {
    const problem = seen.has(uri) ? 'is listed twice' : problemWith(type, uri);
    seen.add(uri);
    if (problem) problems.push({ path: `${field}.${index}`, message: problem });
  });
  return problems;
}
