import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, literalIsPrivate } from '../../core/outbound.ts';

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface TargetPolicy {
  /** `ALLOW_PRIVATE_WEBHOOK_TARGETS`: loopback and private receivers (local development, tests). */
  allowPrivate: boolean;
  /** Production accepts only https:// receivers. */
  httpsOnly: boolean;
}

export interface SendResult {
  /** The receiver's HTTP status; null when none came (refused target, network error, timeout). */
  status: number | null;
  durationMs: number;
  error: string | null;
}

/** Why a URL may not receive webhooks (before any DNS), or null. */
export function targetProblem(raw: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && !policy.httpsOnly))
    return policy.httpsOnly ? 'must use https://' : 'must use http:// or https://';
  if (url.username || url.password) return 'must not contain credentials';
  if (!policy.allowPrivate && literalIsPrivate(url)) {
    return 'must not point to a loopback, private, link-local or metadata address';
  }
  return null;
}

/**
 * POSTs one signed payload: 10 s for everything, redirects not followed (a 3xx is a failed attempt),
 * the target checked again after DNS. Never throws: the outcome is recorded as an attempt.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, policy: TargetPolicy): Promise<SendResult> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): SendResult => ({
    status,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  const problem = targetProblem(url, policy);
  if (problem) return Promise.resolve(done(null, `The endpoint URL ${problem}`));
  const target = new URL(url);
  const options: RequestOptions = {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'user-agent': 'identity-service-webhooks/1',
    },
    // The receiver's name is resolved again at send time and only a vetted address is connected to.
    ...(policy.allowPrivate ? {} : { lookup: guardedLookup() }),
    signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
  };
  return new Promise((resolve) => {
    const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, options, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve(done(res.statusCode ?? null, null)));
      res.on('error', (error) => resolve(done(res.statusCode ?? null, error.message)));
    });
    req.on('error', (error) => {
      const timedOut = error.name === 'AbortError' || error.name === 'TimeoutError';
      resolve(done(null, timedOut ? `No answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : error.message));
    });
    req.end(body);
  });
}
