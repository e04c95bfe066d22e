import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/** `Invoice\u202Efdp.exe` reads as `Invoiceexe.pdf` wherever it is shown. */
const SPOOFED = 'Invoice\u202Efdp.exe';

describe('labels people read are kept as they show (core/labels.ts)', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('refuses hidden and reordering characters in every name an admin or user gives', async () => {
    const user = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const cases: { method: string; path: string; body: Record<string, unknown>; field: string; token?: string }[] = [
      { method: 'POST', path: '/api/v1/groups', body: { name: SPOOFED }, field: 'name' },
      { method: 'POST', path: '/api/v1/roles', body: { name: SPOOFED }, field: 'name' },
      { method: 'POST', path: '/api/v1/organizations', body: { name: SPOOFED }, field: 'name' },
      { method: 'POST', path: '/api/v1/applications', body: { name: SPOOFED, type: 'm2m' }, field: 'name' },
      { method: 'POST', path: '/api/v1/api-keys', body: { name: SPOOFED }, field: 'name' },
      { method: 'POST', path: '/api/v1/vault/objects/', body: { name: SPOOFED, value: 'secret' }, field: 'name' },
      {
        method: 'POST',
        path: '/api/v1/actions/',
        body: { name: SPOOFED, code: 'exports.onExecutePostLogin = async () => {};' },
        field: 'name',
      },
      { method: 'POST', path: '/api/v1/idp-attributes', body: { key: 'department', name: SPOOFED }, field: 'name' },
      { method: 'POST', path: '/api/v1/iga/reviews', body: { name: SPOOFED }, field: 'name' },
      { method: 'PATCH', path: '/api/v1/branding', body: { name: SPOOFED }, field: 'name' },
      { method: 'PUT', path: '/api/v1/email-templates/password_reset', body: { subject: 'Reset\nBcc: x@evil.test' }, field: 'subject' },
      { method: 'POST', path: '/api/v1/mfa/factors/totp', body: { name: 'Phone\u0007' }, field: 'name', token: user.accessToken },
      {
        method: 'POST',
        path: '/platform/v1/workspaces',
        body: { name: SPOOFED, owner: { email: uniqueEmail(), password: 'correct horse battery' } },
        field: 'name',
        token: PLATFORM_TOKEN,
      },
    ];
    for (const c of cases) {
      const res = await call(app, c.method, c.path, { token: c.token ?? ws.apiKey, body: c.body });
      expect([c.path, res.status, res.body.error?.code]).toEqual([c.path, 400, 'BAD_REQUEST']);
      expect(res.body.error.details).toContainEqual({
        path: c.field,
        message: 'must not contain control characters or bidirectional overrides',
      });
    }
  });

  it('keeps names in one Unicode form, so a decomposed accent names the same group', async () => {
    const composed = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Caf\u00e9 staff' } });
    expect(composed.status).toBe(201);
    const decomposed = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Cafe\u0301 staff' } });
    expect([decomposed.status, decomposed.body.error?.code]).toEqual([409, 'CONFLICT']);
  });
});
