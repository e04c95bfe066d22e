import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn, someIp } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/** One password, as different keyboards and input methods send it. */
const COMPOSED = 'Crème brûlée 2024'.normalize('NFC');
const DECOMPOSED = COMPOSED.normalize('NFD');
const FULLWIDTH = 'ｐａｓｓｗｏｒｄ ｏｎ ａ ｐｈｏｎｅ';

describe('passwords are compared in one Unicode form (NFKC)', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ REJECT_COMMON_PASSWORDS: 'true' });
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  async function newUser(password: string) {
    const email = uniqueEmail('form');
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { id: res.body.data.id as string, email };
  }

  it('signs in with the composed, decomposed or fullwidth spelling of the password that was set', async () => {
    expect(DECOMPOSED).not.toBe(COMPOSED);
    const accented = await newUser(DECOMPOSED);
    expect((await login(app, ws.id, accented.email, COMPOSED)).status).toBe(200);
    expect((await login(app, ws.id, accented.email, DECOMPOSED)).status).toBe(200);
    const wide = await newUser(FULLWIDTH);
    expect((await login(app, ws.id, wide.email, 'password on a phone')).status).toBe(200);
    // Spaces and case still count.
    expect((await login(app, ws.id, wide.email, 'Password on a phone')).status).toBe(401);
    expect((await login(app, ws.id, wide.email, 'password on a phone ')).status).toBe(401);
  });

  it('changes to a password in the same form, and checks the current password in it', async () => {
    const user = await newUser(COMPOSED);
    const session = await signIn(app, ws.id, user.email, DECOMPOSED);
    const changed = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: session.accessToken,
      headers: { 'x-forwarded-for': someIp() },
      body: { current_password: DECOMPOSED, new_password: FULLWIDTH },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect((await login(app, ws.id, user.email, 'password on a phone')).status).toBe(200);
  });

  it('refuses a common password in any of its forms, and counts length in the form it is kept in', async () => {
    const common = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('common'), password: 'ＰＡＳＳＷＯＲＤ１２３' },
    });
    expect([common.status, common.body.error?.details?.[0]?.path]).toEqual([400, 'password']);
    // Four ligatures are eight letters once normalised ("ﬀ" is "ff").
    const ligatures = await newUser('ﬀﬁﬂﬃ');
    expect((await login(app, ws.id, ligatures.email, 'fffiflffi')).status).toBe(200);
  });

  it('still signs in a password hashed as typed before normalisation, and stores its normalised hash then', async () => {
    const user = await newUser('placeholder password');
    const legacy = await argon2.hash(DECOMPOSED, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    await app.deps.orm.em.fork().execute('update users set password_hash = ? where id = ?', [legacy, user.id]);
    expect((await login(app, ws.id, user.email, COMPOSED)).status).toBe(401);
    expect((await login(app, ws.id, user.email, DECOMPOSED)).status).toBe(200);
    const [row] = await app.deps.orm.em
      .fork()
      .execute<{ password_hash: string }[]>('select password_hash from users where id = ?', [user.id]);
    expect(row?.password_hash).not.toBe(legacy);
    expect((await login(app, ws.id, user.email, COMPOSED)).status).toBe(200);
  });
});
