import { randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAccessToken } from '../src/modules/auth/access-token.ts';
import type { IdTokenKey } from '../src/modules/auth/signing-keys.ts';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn, type SignedIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

/**
 * Forged and misused tokens, each refused with 401 INVALID_TOKEN: the verifier pins the algorithm
 * (EdDSA), the token type (at+jwt), the issuer, the expiry and a key from our own key store.
 */
describe('JWT attacks on the access token', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let session: SignedIn;
  let claims: { sub: string; tid: string; sid: string; roles: string[] };
  let kid: string;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'JWT');
    session = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    const [header, payload] = session.accessToken
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>) as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    kid = header.kid as string;
    claims = { sub: payload.sub as string, tid: payload.tid as string, sid: payload.sid as string, roles: payload.roles as string[] };
  });
  afterAll(() => app.close());

  const now = () => Math.floor(app.clock.now().getTime() / 1000);
  const baseClaims = () => ({ tid: claims.tid, sid: claims.sid, roles: claims.roles, jti: randomUUID() });

  async function expectRefused(token: string) {
    const res = await call(app, 'GET', '/api/v1/auth/sessions', { token });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('INVALID_TOKEN');
  }

  it('accepts the genuine token (the baseline the attacks start from)', async () => {
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: session.accessToken })).status).toBe(200);
  });

  it('refuses alg: none', async () => {
    const token = new UnsecuredJWT(baseClaims())
      .setIssuer(app.deps.config.BASE_URL)
      .setSubject(claims.sub)
      .setIssuedAt(now())
      .setExpirationTime(now() + 600)
      .encode();
    await expectRefused(token);
    const [, payload] = session.accessToken.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', kid, typ: 'at+jwt' })).toString('base64url');
    await expectRefused(`${header}.${payload}.`);
  });

  it('refuses HS256 signed with the public key as the secret', async () => {
    const jwks = (await call(app, 'GET', '/.well-known/jwks.json')).body as { keys: Record<string, string>[] };
    const publicJwk = jwks.keys.find((k) => k.kid === kid) as Record<string, string>;
    for (const secret of [Buffer.from(publicJwk.x as string, 'base64url'), Buffer.from(JSON.stringify(publicJwk))]) {
      const token = await new SignJWT(baseClaims())
        .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' })
        .setIssuer(app.deps.config.BASE_URL)
        .setSubject(claims.sub)
        .setIssuedAt(now())
        .setExpirationTime(now() + 600)
        .sign(secret);
      await expectRefused(token);
    }
  });

  it('refuses an expired token, a wrong issuer, an unknown kid and a tampered payload', async () => {
    const issuer = { keys: app.deps.keys, clock: app.deps.clock, issuer: app.deps.config.BASE_URL, ttlSeconds: 60 };
    const shortLived = await signAccessToken(issuer, claims);
    expect((await call(app, 'GET', '/api/v1/auth/sessions', { token: shortLived })).status).toBe(200);
    app.clock.advance(61_000);
    await expectRefused(shortLived); // also after it was verified once (and cached)

    await expectRefused(await signAccessToken({ ...issuer, issuer: 'https://evil.example' }, claims));

    const { privateKey } = await app.deps.keys.signingKey();
    const unknownKid = await new SignJWT(baseClaims())
      .setProtectedHeader({ alg: 'EdDSA', kid: 'no-such-key', typ: 'at+jwt' })
      .setIssuer(app.deps.config.BASE_URL)
      .setSubject(claims.sub)
      .setIssuedAt(now())
      .setExpirationTime(now() + 600)
      .sign(privateKey);
    await expectRefused(unknownKid);

    const fresh = await signAccessToken({ ...issuer, ttlSeconds: 600 }, claims);
    const [header, payload, signature] = fresh.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), roles: ['owner', 'admin'], sub: 'usr_someone_else' }),
    ).toString('base64url');
    await expectRefused(`${header}.${forged}.${signature}`);
  });

  it('refuses an id_token (RS256, typ JWT) and a token signed with the id_token key, even with every access claim', async () => {
    const [idKey] = app.deps.keys.idTokenSigners();
    expect(idKey).toBeDefined();
    const rsa = (idKey as IdTokenKey).privateKey;
    for (const typ of ['JWT', 'at+jwt']) {
      const token = await new SignJWT({ ...baseClaims(), aud: 'app_client', nonce: 'n' })
        .setProtectedHeader({ alg: 'RS256', kid: (idKey as IdTokenKey).kid, typ })
        .setIssuer(app.deps.config.BASE_URL)
        .setSubject(claims.sub)
        .setIssuedAt(now())
        .setExpirationTime(now() + 600)
        .sign(rsa);
      await expectRefused(token);
    }
  });

  it('refuses a genuine token once its session has ended', async () => {
    const other = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
    await call(app, 'POST', '/api/v1/auth/logout', { token: other.accessToken });
    await expectRefused(other.accessToken);
  });
});
