import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TEST_MASTER_KEY, startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { cliDatabase, runCli as cli, type CliDatabase } from './helpers/cli.ts';
import { copyRunDatabase } from './helpers/database.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';
import { needsPostgres } from './helpers/needs.ts';

async function jwks(app: TestApp): Promise<JSONWebKeySet> {
  return (await call(app, 'GET', '/.well-known/jwks.json')).body as JSONWebKeySet;
}

async function publishedKids(app: TestApp): Promise<string[]> {
  return (await jwks(app)).keys.map((k) => k.kid as string);
}

/** Polls `check` until it holds or `ms` pass (instances learn of a revocation within 5 seconds). */
async function eventually(check: () => Promise<boolean>, ms = 9_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return check();
}

/**
 * A leaked signing key, revoked by the operator: out of the JWKS, refused by every instance sharing
 * the database (the one that signed the token and another), and replaced at once. Two instances and
 * the CLI need PostgreSQL (a database copied for the file, and the embedded database takes one
 * connection): registered only there (CI); a bare machine's run says it left it out.
 */
needsPostgres(describe, 'two instances and the CLI on one database at once')('revoking a signing key', () => {
  // One issuer for both instances, as behind a load balancer.
  const env = { BASE_URL: `https://keys-${randomUUID()}.example.com`, DATABASE_URL: '' };
  let database: Awaited<ReturnType<typeof copyRunDatabase>>;
  let a: TestApp;
  let b: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    // This file's own copy: signing keys are shared by every app on a database, and these tests revoke
    // keys and move clocks, which other files' key rotations (each app's clock starts at the real
    // time) must not see.
    database = await copyRunDatabase('keys');
    env.DATABASE_URL = database.url;
    a = await startTestApp(env);
    b = await startTestApp(env);
    ws = await createWorkspace(a);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const userRead = (app: TestApp, token: string) => call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token });

  it('refuses its tokens on both instances, genuine or minted with the leaked key, and signs with a fresh key at once', async () => {
    const before = await signIn(a, ws.id, ws.owner.email, ws.owner.password);
    const kid = decodeProtectedHeader(before.accessToken).kid as string;
    // Both instances have checked the token's signature once and remember it.
    for (const app of [a, b]) expect((await userRead(app, before.accessToken)).status).toBe(200);
    const leaked = await a.deps.keys.signingKey();
    expect(leaked.kid).toBe(kid);

    const cliEnv = { ...process.env, ...env, REDIS_URL: '', VAULT_MASTER_KEY: TEST_MASTER_KEY };
    const listed = await cli(cliEnv, 'keys', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    const row = JSON.parse(listed.stdout).keys.find((k: { kid: string }) => k.kid === kid);
    expect(row).toMatchObject({ alg: 'EdDSA', use: 'sig', published: true, signing: true, revoked_at: null });
    const revoked = await cli(cliEnv, 'keys', 'revoke', kid);
    expect(revoked.code, revoked.stderr).toBe(0);
    const out = JSON.parse(revoked.stdout);
    expect(out).toMatchObject({ kid, alg: 'EdDSA', already_revoked: false });
    expect(revoked.stderr).toContain('no restart is needed');
    const signingKid: string = out.signing_kid;
    // The CLI's clock is the real one; the apps' stand still until moved.
    for (const app of [a, b]) app.clock.advance(60_000);
    expect(signingKid).toMatch(/^sgk_/);
    expect(signingKid).not.toBe(kid);

    // Gone from the JWKS at once, on either instance.
    for (const app of [a, b]) expect(await publishedKids(app)).not.toContain(kid);
    // Refused by both: the remembered token, and one the attacker mints now with the leaked key.
    const claims = decodeJwt(before.accessToken);
    const iat = Math.floor(a.clock.now().getTime() / 1000);
    const minted = leaked.sign({ ...claims, iat, exp: iat + 900, jti: randomUUID() });
    for (const app of [a, b]) {
      for (const token of [before.accessToken, minted]) {
        expect(await eventually(async () => (await userRead(app, token)).status === 401)).toBe(true);
        const refused = await userRead(app, token);
        expect([refused.status, refused.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      }
    }

    // New sign-ins, on either instance, get the fresh key's tokens, which the JWKS verifies.
    for (const app of [a, b]) {
      const after = await signIn(app, ws.id, ws.owner.email, ws.owner.password);
      expect(decodeProtectedHeader(after.accessToken).kid).toBe(signingKid);
      await expect(jwtVerify(after.accessToken, createLocalJWKSet(await jwks(app)), { issuer: env.BASE_URL })).resolves.toBeTruthy();
      for (const other of [a, b]) expect((await userRead(other, after.accessToken)).status).toBe(200);
    }
  }, 90_000);

  /** Moves both instances' clocks: they stand still until moved. */
  const advance = (ms: number) => {
    for (const app of [a, b]) app.clock.advance(ms);
  };
  const signingKidOf = async (app: TestApp) =>
    decodeProtectedHeader((await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken).kid;

  it('replaces the key that signs with a fresh one that signs at once, not with the retired key still published', async () => {
    const retired = (await a.deps.keys.signingKey()).kid;
    const signing = await a.deps.keys.rotate();
    advance(5 * 60 * 1000);
    expect(await signingKidOf(a)).toBe(signing);
    const { signingKid: fresh } = await a.deps.keys.revoke(signing);
    expect([retired, signing]).not.toContain(fresh);
    expect(await signingKidOf(a)).toBe(fresh);
    expect(await publishedKids(a)).toEqual(expect.arrayContaining([retired, fresh]));
  });

  it('revoking the key that still signs while a rotation waits makes the waiting key sign at once', async () => {
    // An older retired key is still published too: it must not be the one to sign.
    await a.deps.keys.rotate();
    advance(5 * 60 * 1000);
    const signing = (await a.deps.keys.signingKey()).kid;
    const rotated = await a.deps.keys.rotate();
    expect(await signingKidOf(a)).toBe(signing);
    const revoked = await a.deps.keys.revoke(signing);
    expect(revoked.signingKid).toBe(rotated);
    expect(await signingKidOf(a)).toBe(rotated);
    expect(await publishedKids(a)).toEqual(expect.arrayContaining([rotated]));
    expect(await publishedKids(a)).not.toContain(signing);
    // Revoking it again changes nothing.
    expect(await a.deps.keys.revoke(signing)).toMatchObject({ alreadyRevoked: true, signingKid: rotated });
  });

  it('another instance learns of any revocation, one that makes no key and moves no time forward included', async () => {
    const before = await signIn(a, ws.id, ws.owner.email, ws.owner.password);
    const kid = decodeProtectedHeader(before.accessToken).kid as string;
    expect((await userRead(b, before.accessToken)).status).toBe(200);
    await a.deps.keys.rotate();
    advance(5 * 60 * 1000);
    // The next rotation's key signs 5 minutes from now: the latest instant in the table. B loads it
    // (its change check, every 5 seconds): waited for in B's cache, read 5 minutes ahead, so that the
    // revocation below is B's next change whatever the load, not one it learns with the rotation.
    const next = await a.deps.keys.rotate();
    await vi.waitFor(
      async () => {
        b.clock.advance(5 * 60 * 1000 + 1000);
        try {
          expect((await b.deps.keys.signingKey()).kid).toBe(next);
        } finally {
          b.clock.advance(-(5 * 60 * 1000 + 1000));
        }
      },
      { timeout: 15_000, interval: 200 },
    );
    const revoked = await a.deps.keys.revoke(kid);
    expect(revoked.signingKid).not.toBe(kid);
    expect(await eventually(async () => (await userRead(b, before.accessToken)).status === 401)).toBe(true);
  });

  it('revokes an id_token key: out of the JWKS, and another signs id_tokens at once, on both instances', async () => {
    const rs256 = async (app: TestApp) => (await jwks(app)).keys.filter((k) => k.alg === 'RS256').map((k) => k.kid as string);
    const [signing] = a.deps.keys.idTokenSigners();
    expect(signing).toBeDefined();
    const revoked = await a.deps.keys.revoke(signing?.kid as string);
    expect(revoked.alg).toBe('RS256');
    for (const app of [a, b]) expect(await rs256(app)).not.toContain(signing?.kid);
    expect(a.deps.keys.idTokenSigners().map((k) => k.kid)).not.toContain(signing?.kid);
    expect(a.deps.keys.idTokenSigners()[0]?.kid).toBe(revoked.signingKid);
    expect(
      await eventually(async () => {
        b.clock.advance(1_000);
        return b.deps.keys.idTokenSigners()[0]?.kid === revoked.signingKid;
      }),
    ).toBe(true);
    expect(b.deps.keys.idTokenSigners().map((k) => k.kid)).not.toContain(signing?.kid);
  });

  it('serves the JWKS cacheable for a minute, well inside the 5 minutes a new key is published before it signs', async () => {
    const res = await call(a, 'GET', '/.well-known/jwks.json');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
  });
});

describe('npm run cli -- keys', () => {
  let database: CliDatabase;
  beforeAll(async () => {
    database = await cliDatabase('keys_cli');
  });
  afterAll(() => database?.drop());

  it('lists the keys, refuses an unknown kid, and revoking the only key leaves a fresh one signing', async () => {
    const { env } = database;
    const list = async () => JSON.parse((await cli(env, 'keys', 'list')).stdout).keys as Record<string, unknown>[];
    const first = await list();
    expect(first.map((k) => [k.alg, k.use, k.signing, k.published, k.revoked_at])).toEqual(
      expect.arrayContaining([
        ['EdDSA', 'sig', true, true, null],
        ['RS256', 'sig', true, true, null],
      ]),
    );
    expect(first).toHaveLength(2);

    const unknown = await cli(env, 'keys', 'revoke', 'sgk_nosuchkey');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('No signing key has the kid sgk_nosuchkey');
    const missing = await cli(env, 'keys', 'revoke');
    expect(missing.code).not.toBe(0);

    const only = first.find((k) => k.alg === 'EdDSA')?.kid as string;
    const revoked = await cli(env, 'keys', 'revoke', only);
    expect(revoked.code, revoked.stderr).toBe(0);
    const fresh = JSON.parse(revoked.stdout).signing_kid as string;
    expect(fresh).not.toBe(only);
    const after = await list();
    expect(after.find((k) => k.kid === only)).toMatchObject({ published: false, signing: false, revoked_at: expect.any(String) });
    expect(after.find((k) => k.kid === fresh)).toMatchObject({ alg: 'EdDSA', published: true, signing: true, retired_at: null });
  }, 120_000);
});
