import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { login } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

// test/setup/cheap-hashing.ts: the in-process app hashes with cheap Argon2id; this checks it does.
describe('in-process tests hash cheaply', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('stores a new user’s password as argon2id with m=1 MiB, t=1, and keeps it through a sign-in', async () => {
    const email = uniqueEmail('cheap');
    const password = 'a cheaply hashed password';
    const created = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const storedHash = async () => {
      const [row] = await app.deps.orm.em
        .fork()
        .execute<{ password_hash: string }[]>('select password_hash from users where id = ?', [created.body.data.id]);
      return row?.password_hash;
    };
    const stored = await storedHash();
    expect(stored?.startsWith('$argon2id$v=19$m=1024,t=1,p=1$')).toBe(true);
    expect((await login(app, ws.id, email, password)).status).toBe(200);
    // Not taken for a hash due for new parameters: a sign-in leaves it as it was.
    expect(await storedHash()).toBe(stored);
  });
});
