import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

describe('signing keys: rotation keeps old tokens valid until they expire', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('signs new tokens with the new key, still accepts the old ones, and unpublishes the old key later', async () => {
    const before = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const oldKid = decodeProtectedHeader(before.accessToken).kid;
    const newKid = await app.deps.keys.rotate();
    expect(newKid).not.toBe(oldKid);

    const after = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(newKid);
    const jwks = await call(app, 'GET', '/.well-known/jwks.json');
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: before.accessToken })).status).toBe(200);

    app.clock.advance(21 * 60 * 1000);
    const later = await call(app, 'GET', '/.well-known/jwks.json');
    expect(later.body.keys.map((k: { kid: string }) => k.kid)).not.toContain(oldKid);
    expect(later.body.keys.map((k: { kid: string }) => k.kid)).toContain(newKid);
  });
});
