import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { AppError } from './errors.ts';
import { isNonPublicAddress } from './public-address.ts';

/**
 * Outbound calls to servers a customer names (an identity provider's discovery, token, userinfo and
 * JWKS endpoints): unless `allowPrivate`, they reach public addresses only, checked on the URL and
 * again on the addresses its name resolves to when the connection is made (no second lookup a DNS
 * rebinding could answer differently), as webhook deliveries are (modules/webhooks/sender.ts).
 */
export interface OutboundPolicy {
  allowPrivate: boolean;
}

const PRIVATE = 'a loopback, private, link-local or metadata address';

/** An outbound call refused because its target is, or resolves to, a non-public address. */
export class PrivateTargetError extends AppError {
  constructor(what: string) {
    super('BAD_REQUEST', `${what} points to ${PRIVATE}; such servers are not called`);
  }
}

/** The PrivateTargetError among an error's causes (libraries wrap what a fetch threw), if any. */
export function privateTargetIn(error: unknown): PrivateTargetError | undefined {
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof PrivateTargetError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether a URL's host is a name or literal that is never public (before any DNS). */
export function literalIsPrivate(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isNonPublicAddress(host));
}

/**
 * Why `raw` may not be called under `policy` (for a 400 when it is saved), or null: a loopback,
 * private or metadata address, or a name that resolves to one (or does not resolve).
 */
export async function outboundTargetProblem(raw: string, policy: OutboundPolicy): Promise<string | null> {
  if (policy.allowPrivate) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a valid URL';
  }
  if (literalIsPrivate(url)) return `points to ${PRIVATE}`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return 'has a host name that does not resolve';
  }
  return addresses.some((a) => isNonPublicAddress(a.address)) ? `resolves to ${PRIVATE}` : null;
}

/**
 * Resolves the name when connecting and lets the connection go only to an address that passed (no
 * second lookup a DNS rebinding could answer differently); webhook deliveries use it too.
 */
export function guardedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const chosen = addresses[0];
      if (!chosen || addresses.some((a) => isNonPublicAddress(a.address))) {
        return callback(new PrivateTargetError(`The host ${hostname}`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, chosen.address, chosen.family);
    });
  };
}

/** What openid-client hands its fetch (`client.customFetch`). */
export interface OutboundInit {
  method: string;
  headers: Record<string, string>;
  body?: ArrayBuffer | Uint8Array | string | URLSearchParams | ReadableStream | null;
  signal?: AbortSignal;
}

/** An answer larger than this is not read (discovery documents, tokens and JWKS are a few KiB). */
const MAX_ANSWER_BYTES = 1024 * 1024;

function bodyOf(body: OutboundInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof ArrayBuffer || body instanceof Uint8Array) return Buffer.from(body as Uint8Array);
  throw new TypeError('A streamed request body is not supported for outbound calls');
}

function answerOf(res: IncomingMessage, chunks: Buffer[], method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const one of [value ?? []].flat()) headers.append(name, one);
  }
  const status = res.statusCode ?? 502;
  const empty = method === 'HEAD' || [204, 205, 304].includes(status);
  return new Response(empty ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers });
}

/**
 * A fetch for calls to customer-named servers under `policy`: unless private targets are allowed, the
 * URL is checked, then the connection is made through the guarded lookup (the same code either way,
 * so tests against local servers run what production runs). Redirects are never followed (openid-client
 * asks for `manual`); an answer over 1 MiB is an error.
 */
export function outboundFetch(policy: OutboundPolicy): (url: string, init: OutboundInit) => Promise<Response> {
  return (raw, init) => {
    const url = new URL(raw);
    if (!policy.allowPrivate && literalIsPrivate(url)) return Promise.reject(new PrivateTargetError(`The URL ${url.origin}`));
    const body = bodyOf(init.body);
    const send = url.protocol === 'https:' ? httpsRequest : url.protocol === 'http:' ? httpRequest : null;
    if (!send) return Promise.reject(new TypeError(`Only http and https URLs are called, not ${url.protocol}`));
    return new Promise<Response>((resolve, reject) => {
      const req = send(
        url,
        {
          method: init.method,
          headers: { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
          ...(policy.allowPrivate ? {} : { lookup: guardedLookup() }),
          signal: init.signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) res.destroy(new Error(`The answer of ${url.origin} is larger than 1 MiB`));
            else chunks.push(chunk);
          });
          res.on('end', () => resolve(answerOf(res, chunks, init.method)));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
