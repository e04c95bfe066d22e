import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { SigningKeys } from './signing-keys.ts';

describe('signing keys: rotation keeps old tokens valid until they expire', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('publishes the new key first, signs with it 5 minutes later, still accepts the old tokens, and unpublishes the old key later', async () => {
    const before = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const oldKid = decodeProtectedHeader(before.accessToken).kid;
    const newKid = await app.deps.keys.rotate();
    expect(newKid).not.toBe(oldKid);

    // APIs holding a cached JWKS would refuse a token signed with a key they have not seen yet: the new
    // key is published now and signs only once 5 minutes have passed.
    const meanwhile = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect(decodeProtectedHeader(meanwhile.accessToken).kid).toBe(oldKid);
    app.clock.advance(5 * 60 * 1000);
    const after = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    expect(decodeProtectedHeader(after.accessToken).kid).toBe(newKid);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: meanwhile.accessToken })).status).toBe(200);
    const jwks = await call(app, 'GET', '/.well-known/jwks.json', { headers: { origin: 'https://spa.example.com' } });
    expect(jwks.body.keys.map((k: { kid: string }) => k.kid)).toEqual(expect.arrayContaining([oldKid, newKid]));
    // Readable from a browser app on any origin, preflight included.
    expect(jwks.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await call(app, 'OPTIONS', '/.well-known/jwks.json', { headers: { origin: 'https://spa.example.com' } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, '*']);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: before.accessToken })).status).toBe(200);

    // A token the old key signed just before the switch lives 15 minutes more; an instance that reloads
    // late (every minute) may sign one a minute later still: the old key stays published 25 minutes.
    app.clock.advance(19 * 60 * 1000);
    const published = await call(app, 'GET', '/.well-known/jwks.json');
    expect(published.body.keys.map((k: { kid: string }) => k.kid)).toContain(oldKid);
    app.clock.advance(2 * 60 * 1000);
    const later = await call(app, 'GET', '/.well-known/jwks.json');
    expect(later.body.keys.map((k: { kid: string }) => k.kid)).not.toContain(oldKid);
    expect(later.body.keys.map((k: { kid: string }) => k.kid)).toContain(newKid);
  });

  it('rotates the id_token (RS256) key on its own; the new one signs after 5 minutes, the retired one stays published a day', async () => {
    const kids = async (alg: string) =>
      (await call(app, 'GET', '/.well-known/jwks.json')).body.keys
        .filter((k: { alg: string }) => k.alg === alg)
        .map((k: { kid: string }) => k.kid);
    const accessKid = decodeProtectedHeader((await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken).kid;
    const [oldIdKid] = await kids('RS256');
    const newIdKid = await app.deps.keys.rotate('RS256');
    expect(await kids('RS256')).toEqual(expect.arrayContaining([oldIdKid, newIdKid]));
    expect(decodeProtectedHeader((await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken).kid).toBe(accessKid);
    const signers = app.deps.keys.idTokenSigners().map((k) => k.kid);
    expect(signers).toContain(newIdKid);
    expect(signers[0]).not.toBe(newIdKid);
    app.clock.advance(5 * 60 * 1000);
    const [first] = app.deps.keys.idTokenSigners();
    expect(first?.kid).toBe(newIdKid);
    expect(first?.privateKey.asymmetricKeyType).toBe('rsa');

    app.clock.advance(2 * 60 * 60 * 1000);
    expect(await kids('RS256')).toContain(oldIdKid);
    app.clock.advance(24 * 60 * 60 * 1000);
    expect(await kids('RS256')).not.toContain(oldIdKid);
  });

  it('orders id_token keys made in the same instant by when they were made: the later one signs once published 5 minutes', async () => {
    // The test clock stands still: both rotations stamp the same created_at.
    const first = await app.deps.keys.rotate('RS256');
    const second = await app.deps.keys.rotate('RS256');
    expect(app.deps.keys.idTokenSigners().map((k) => k.kid)).toEqual(expect.arrayContaining([first, second]));
    app.clock.advance(5 * 60 * 1000);
    expect(app.deps.keys.idTokenSigners()[0]?.kid).toBe(second);
  });

  it('an instance that signed nothing since another one rotated signs its next token with the new key', async () => {
    // Two instances' key caches on the one database; the first reloads every 50 ms instead of every minute.
    const errors: unknown[] = [];
    const instance = () => new SigningKeys(app.deps.orm, app.deps.box, app.clock, 900, (error) => errors.push(error), 50);
    const idle = instance();
    await idle.ensureActiveKey();
    idle.start();
    try {
      const before = (await idle.signingKey()).kid;
      const newKid = await instance().rotate();
      expect(newKid).not.toBe(before);
      // Nothing asks the idle instance for a key but these reads of its cache: its timer finds the
      // rotation on its own (waited for, not given a while: under load the timer may come late).
      app.clock.advance(5 * 60 * 1000);
      await vi.waitFor(async () => expect((await idle.signingKey()).kid).toBe(newKid), { timeout: 8_000 });
      // The same cache, 5 minutes earlier: the new key was published but did not sign yet.
      app.clock.advance(-5 * 60 * 1000);
      expect((await idle.signingKey()).kid).toBe(before);
      app.clock.advance(5 * 60 * 1000);
      expect(errors).toEqual([]);
    } finally {
      await idle.stop();
      await app.deps.keys.rotate();
    }
  });
});
