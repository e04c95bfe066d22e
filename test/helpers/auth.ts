import { randomInt } from 'node:crypto';
import type { TestApp } from './app.ts';
import { call, type ApiResponse } from './http.ts';

/**
 * A fresh address from the documentation range for each call, so the per-IP limits of one test do
 * not spend another's (the test apps trust X-Forwarded-For from loopback).
 */
export function someIp(): string {
  return `198.51.${randomInt(0, 256)}.${randomInt(1, 255)}`;
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
