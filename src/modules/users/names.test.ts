import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migration20261201010000_nfc_user_names } from '../../db/migrations/Migration20261201010000_nfc_user_names.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'a sturdy passphrase';

describe('user names: one Unicode form, nothing that hides or reorders text', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
  });
  afterAll(() => app.close());

  const create = (name: string) =>
    call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('name'), password: PASSWORD, name } });
  const search = async (q: string) =>
    (await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(q)}`, { token: ws.apiKey })).body.meta.total as number;

  it('keeps a name typed with decomposed accents in NFC, and finds it by either spelling', async () => {
    const surname = `Brûlé${Date.now()}`;
    const created = await create(`Zoë ${surname}`.normalize('NFD'));
    expect(created.status).toBe(201);
    expect(created.body.data.name).toBe(`Zoë ${surname}`.normalize('NFC'));
    expect(await search(surname.normalize('NFC'))).toBe(1);
    expect(await search(surname.normalize('NFD'))).toBe(1);
    expect(await search(surname.toUpperCase().normalize('NFD'))).toBe(1);
    const renamed = await call(app, 'PATCH', `/api/v1/users/${created.body.data.id}`, {
      token: ws.apiKey,
      body: { name: `Zoë ${surname}!`.normalize('NFD') },
    });
    expect(renamed.body.data.name).toBe(`Zoë ${surname}!`.normalize('NFC'));
  });

  it('refuses control characters and bidirectional overrides in a name, on every door', async () => {
    for (const name of ['Bob\nAdmin', 'Bell\u0007', 'Invoice\u202Efdp.exe', 'Isolate\u2066x\u2069', 'C1\u0085']) {
      const res = await create(name);
      expect([res.status, res.body.error?.details?.[0]?.path], JSON.stringify(name)).toEqual([400, 'name']);
    }
    const user = await create('Plain Name');
    const patched = await call(app, 'PATCH', `/api/v1/users/${user.body.data.id}`, { token: ws.apiKey, body: { name: 'x\u202Ey' } });
    expect(patched.status).toBe(400);
    const viaGraphql = await graphql(
      app,
      'mutation($email: String!) { createUser(input: { email: $email, password: "a sturdy passphrase", name: "Tab\\there" }) { id } }',
      { email: uniqueEmail('gql') },
      ws.apiKey,
    );
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    // Right-to-left names need none of these: Arabic and Hebrew are kept as written.
    expect((await create('ليلى כהן')).status).toBe(201);
  });

  it('brings names stored before into NFC', async () => {
    const user = await create('Placeholder');
    const decomposed = 'Anaïs Noël'.normalize('NFD');
    const em = app.deps.orm.em.fork();
    await em.execute('update users set name = ? where id = ?', [decomposed, user.body.data.id]);
    const migration = new Migration20261201010000_nfc_user_names(em.getDriver(), app.deps.orm.config);
    await migration.up();
    for (const sql of migration.getQueries()) await em.execute(typeof sql === 'string' ? sql : sql.toString());
    const [row] = await em.execute<{ name: string }[]>('select name from users where id = ?', [user.body.data.id]);
    expect(row?.name).toBe('Anaïs Noël'.normalize('NFC'));
  });
});
