import { randomInt } from 'node:crypto';
import type { TestApp } from './app.ts';
import { call, type ApiResponse } from './http.ts';

const ADDRESSES = 256 * 254;
let nextAddress = randomInt(0, ADDRESSES);

/**
 * A fresh address in 198.51.0.0/16 for each call, so the per-IP limits of one test do not spend
 * another's (the test apps trust X-Forwarded-For from loopback). Addresses are taken in turn from a
 * random start, not drawn: a drawn one repeated an earlier test's now and then (1 in 65,024 per
 * address used before it in the minute), and a test spending a limit of 10 got its 429 early.
 */
export function someIp(): string {
  const n = nextAddress++ % ADDRESSES;
  return `198.51.${Math.floor(n / 254)}.${(n % 254) + 1}`;
}

export function login(app: TestApp, workspaceId: string, email: string, password: string, ip = someIp()): Promise<ApiResponse<any>> {
  return call(app, 'POST', '/api/v1/auth/login', {
    headers: { 'x-tenant-id': workspaceId, 'x-forwarded-for': ip },
    body: { email, password },
  });
}

export interface SignedIn {
  accessToken: string;
  refreshToken: string;
  userId: string;
  sessionId: string;
}

export async function signIn(app: TestApp, workspaceId: string, email: string, password: string): Promise<SignedIn> {
  const res = await login(app, workspaceId, email, password);
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const accessToken = res.body.data.access_token as string;
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1] as string, 'base64url').toString()) as { sid: string };
  return { accessToken, refreshToken: res.body.data.refresh_token, userId: res.body.data.user.id, sessionId: claims.sid };
}
