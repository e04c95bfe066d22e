/**
 * Where to go after signing in: the `next` the dashboard sent, if it is one of our own dashboard
 * paths. Anything else (another origin, `//evil.example`) is ignored, so /login is no open redirect.
 */
export function nextPath(search: URLSearchParams): string {
  const next = search.get('next');
  if (next && /^\/dashboard(?:[/?#]|$)/.test(next) && !next.startsWith('//')) return next;
  return '/dashboard';
}
