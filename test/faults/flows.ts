import { randomUUID } from 'node:crypto';
import type { TOTP } from 'otpauth';
import { expect } from 'vitest';
import { API_KEY, freshIp, request, text, type Reply } from './harness.ts';
import { authenticatorOf } from '../helpers/authenticator.ts';

/** The few API journeys the fault scenarios repeat. */

export const USER_PASSWORD = 'fault suite user password';

export interface Tokens {
  access: string;
  refresh: string;
}

export function tokensOf(reply: Reply): Tokens {
  return { access: text(reply, 'data.access_token'), refresh: text(reply, 'data.refresh_token') };
}

export async function createUser(base: string, label: string): Promise<{ id: string; email: string }> {
  const email = `${label}-${randomUUID().slice(0, 8)}@faults.test`;
  const created = await request(base, 'POST', '/api/v1/users', { token: API_KEY, ip: freshIp(), body: { email, password: USER_PASSWORD } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: text(created, 'data.id'), email };
}

export function signIn(base: string, tenant: string, email: string, password = USER_PASSWORD, ip = freshIp()): Promise<Reply> {
  return request(base, 'POST', '/api/v1/auth/login', { ip, tenant, body: { email, password } });
}

export async function signedIn(base: string, tenant: string, email: string, password = USER_PASSWORD): Promise<Tokens> {
  const reply = await signIn(base, tenant, email, password);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return tokensOf(reply);
}

/** A user with a verified authenticator app: every sign-in of theirs answers an mfa_token. */
export async function userWithTotp(base: string, tenant: string): Promise<{ email: string; totp: TOTP }> {
  const user = await createUser(base, 'mfa');
  const { access } = await signedIn(base, tenant, user.email);
  const enrolled = await request(base, 'POST', '/api/v1/mfa/factors/totp', { token: access, ip: freshIp(), body: { name: 'phone' } });
  expect(enrolled.status, JSON.stringify(enrolled.body)).toBe(201);
  const totp = authenticatorOf(text(enrolled, 'data.otpauth_uri'));
  const verified = await request(base, 'POST', `/api/v1/mfa/factors/${text(enrolled, 'data.factor.id')}/verify`, {
    token: access,
    ip: freshIp(),
    body: { code: totp.generate() },
  });
  expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  return { email: user.email, totp };
}

/** Whether an access token is accepted (a call that needs a live session). */
export function sessionsCall(base: string, token: string): Promise<Reply> {
  return request(base, 'GET', '/api/v1/auth/sessions', { token, ip: freshIp() });
}

/** A webhook endpoint subscribed to every event type; answers its id and whsec_ secret. */
export async function createEndpoint(base: string, url: string): Promise<{ id: string; secret: string }> {
  const created = await request(base, 'POST', '/api/v1/webhooks/', { token: API_KEY, ip: freshIp(), body: { url, event_types: [] } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: text(created, 'data.id'), secret: text(created, 'data.secret') };
}
