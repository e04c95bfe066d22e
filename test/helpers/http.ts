import type { TestApp } from './app.ts';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text, sent as it is (malformed JSON, oversized bodies). */
  raw?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** Real HTTP against the running app; the body is parsed as JSON when it is JSON. */
export async function call<T = any>(app: TestApp, method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
  // Redirects are answers to assert on (302 to a provider, 303 back to the app), never followed.
  const res = await fetch(`${app.url}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed as T };
}

/** A GraphQL request; answers `{data, errors}`. */
export async function graphql<T = any>(app: TestApp, query: string, variables: Record<string, unknown> = {}, token?: string) {
  return call<{ data: T | null; errors?: { message: string; extensions: { code: string } }[] }>(app, 'POST', '/graphql', {
    body: { query, variables },
    token,
  });
}

/** A tRPC HTTP call (no batching): queries by GET with `input`, mutations by POST. */
export async function trpc<T = any>(app: TestApp, kind: 'query' | 'mutation', path: string, input: unknown, token?: string) {
  if (kind === 'query') {
    const qs = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    return call<T>(app, 'GET', `/trpc/${path}${qs}`, { token });
  }
  return call<T>(app, 'POST', `/trpc/${path}`, { body: input ?? {}, token });
}

/** `Authorization` for client_secret_basic: id and secret form-encoded, then base64 (RFC 6749 §2.3.1). */
export function basicAuth(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}
