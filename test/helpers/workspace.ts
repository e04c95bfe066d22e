import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { PLATFORM_TOKEN } from './app.ts';
import { call } from './http.ts';

export interface TestWorkspace {
  id: string;
  apiKey: string;
  owner: { id: string; email: string; password: string };
}

/** A fresh workspace through the platform API, as an operator would make one. */
export async function createWorkspace(app: TestApp, name = 'Test workspace'): Promise<TestWorkspace> {
  const owner = { email: `owner-${randomUUID()}@example.com`, password: 'correct horse battery' };
  const res = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name, owner } });
  expect(res.status).toBe(201);
  const data = res.body.data;
  return { id: data.workspace.id, apiKey: data.api_key, owner: { id: data.owner.id, email: data.owner.email, password: owner.password } };
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID()}@example.com`;
}
