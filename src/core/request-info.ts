import type { IncomingMessage } from 'node:http';

/**
 * What the Express layer learned about a request (its id, the client IP after TRUST_PROXY), kept
 * beside the raw request so every door's context reads the same values.
 */
export interface RequestInfo {
  requestId: string;
  ip: string;
}

const infos = new WeakMap<IncomingMessage, RequestInfo>();

export function setRequestInfo(req: IncomingMessage, info: RequestInfo): void {
  infos.set(req, info);
}

export function getRequestInfo(req: IncomingMessage): RequestInfo {
  const info = infos.get(req);
  if (!info) throw new Error('request-info middleware did not run for this request');
  return info;
}
