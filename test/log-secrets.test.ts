import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { signIn } from './helpers/auth.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, uniqueEmail } from './helpers/workspace.ts';

/**
 * A query that fails is logged (an unexpected 500), and knex and MikroORM write the statement into the
 * error's message with its values in it. A password change that fails must not put the old and the
 * new password hash in the log. The failure is real: a trigger the test installs refuses the update
 * of one marked account's password.
 */
describe('a failed query leaves no secret in the log', () => {
  let app: TestApp;
  const lines: string[] = [];
  const email = uniqueEmail('log-secrets');
  const sql = (text: string) => app.deps.orm.em.getConnection().execute(text);

  beforeAll(async () => {
    app = await startTestApp({}, { logLine: (line) => lines.push(line) });
    await sql(`create or replace function test_refuse_password() returns trigger language plpgsql as $$
      begin
        if new.email = '${email}' and new.password_hash is distinct from old.password_hash then
          raise exception 'refused by the test';
        end if;
        return new;
      end $$`);
    await sql('create trigger test_refuse_password before update on users for each row execute function test_refuse_password()');
  });
  afterAll(async () => {
    await sql('drop trigger if exists test_refuse_password on users');
    await sql('drop function if exists test_refuse_password()');
    await app.close();
  });

  it('logs the failure with PostgreSQL’s reason, without the statement’s values', async () => {
    const ws = await createWorkspace(app, 'Log secrets');
    const password = 'the first passphrase';
    expect((await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password } })).status).toBe(201);
    const { accessToken } = await signIn(app, ws.id, email, password);

    const res = await call(app, 'POST', '/api/v1/auth/password/change', {
      token: accessToken,
      body: { current_password: password, new_password: 'the second passphrase' },
    });
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toMatch(/argon2|password_hash|refused by the test/);

    const logged = lines.filter((line) => line.includes('refused by the test'));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toMatch(/\$argon2id\$|password_hash = /);
  });
});
