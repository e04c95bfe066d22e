import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, TEST_MASTER_KEY, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { CryptoBox } from '../../core/crypto-box.ts';
import { resealColumn, SEALED_COLUMNS } from './rewrap.ts';
import { rewrapVault } from './vault.service.ts';

const PASSWORD = 'vault passphrase';

interface Row {
  id: string;
  workspace_id: string;
  ciphertext: string;
  wrapped_key: string;
  key_id: string;
}

describe('vault', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const tokens: Record<string, string> = {};
  const userIds: Record<string, string> = {};

  async function rows(): Promise<Row[]> {
    return app.deps.orm.em
      .getConnection()
      .execute<Row[]>('select id, workspace_id, ciphertext, wrapped_key, key_id from vault_objects where workspace_id = ? order by id', [
        ws.id,
      ]);
  }

  async function store(name: string, value: string, token = ws.apiKey) {
    return call(app, 'POST', '/api/v1/vault/objects/', { token, body: { name, value, description: 'for tests' } });
  }

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const roleId = (key: string) => roles.body.data.find((r: { key: string }) => r.key === key).id as string;
    tokens.owner = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
    for (const role of ['admin', 'viewer', 'member']) {
      const email = uniqueEmail(role);
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
      userIds[role] = user.body.data.id;
      if (role !== 'member') {
        await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: roleId(role) } });
      }
      tokens[role] = (await signIn(app, ws.id, email, PASSWORD)).accessToken;
    }
  });
  afterAll(() => app.close());

  it('stores a secret and answers only its metadata', async () => {
    const value = `sk_live_${randomUUID()}`;
    const res = await store('stripe/secret-key', value);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body.data).sort()).toEqual(['created_at', 'created_by', 'description', 'id', 'name', 'updated_at']);
    expect(res.body.data).toMatchObject({ name: 'stripe/secret-key', description: 'for tests', created_by: { type: 'api_key' } });
    expect(JSON.stringify(res.body)).not.toContain(value);

    const list = await call(app, 'GET', '/api/v1/vault/objects/', { token: ws.apiKey });
    expect(list.body.meta.total).toBe(1);
    expect(list.body.data[0]).toEqual(res.body.data);
    expect(JSON.stringify(list.body)).not.toContain(value);
    const one = await call(app, 'GET', `/api/v1/vault/objects/${res.body.data.id}`, { token: ws.apiKey });
    expect(one.body.data).toEqual(res.body.data);
  });

  it('reveals the value to owners, admins and API keys, with Cache-Control: no-store, auditing every reveal', async () => {
    const value = `db-password-${randomUUID()}`;
    const { id } = (await store('db/password', value, tokens.owner)).body.data;
    for (const token of [tokens.owner, tokens.admin, ws.apiKey]) {
      const res = await call(app, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id, name: 'db/password', value });
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const trpc = await call(app, 'GET', `/trpc/vault.reveal?input=${encodeURIComponent(JSON.stringify({ id }))}`, { token: ws.apiKey });
    expect(trpc.body.result.data.value).toBe(value);
    expect(trpc.headers.get('cache-control')).toBe('no-store');

    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=vault.reveal&target_id=${id}`, { token: ws.apiKey });
    expect(audit.body.meta.total).toBe(4);
    expect(audit.body.data.map((e: any) => e.actor.type).sort()).toEqual(['api_key', 'api_key', 'user', 'user']);
    expect(JSON.stringify(audit.body)).not.toContain(value);
  });

  it('lets a viewer list but never reveal; a member neither; nobody without a credential; refused reveals are audited', async () => {
    const { id } = (await store('viewer-proof', `hidden-${randomUUID()}`)).body.data;
    expect((await call(app, 'GET', '/api/v1/vault/objects/', { token: tokens.viewer })).status).toBe(200);
    expect((await call(app, 'GET', `/api/v1/vault/objects/${id}`, { token: tokens.viewer })).status).toBe(200);
    const viewer = await call(app, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token: tokens.viewer });
    expect([viewer.status, viewer.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await store('by-viewer', 'x', tokens.viewer)).status).toBe(403);
    expect((await call(app, 'DELETE', `/api/v1/vault/objects/${id}`, { token: tokens.viewer })).status).toBe(403);
    for (const path of ['/api/v1/vault/objects/', `/api/v1/vault/objects/${id}/reveal`]) {
      expect((await call(app, 'GET', path, { token: tokens.member })).status).toBe(403);
      expect((await call(app, 'GET', path)).status).toBe(401);
    }
    // The viewer's and the member's attempts, naming the object; no success, and nothing for the calls without a credential.
    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=vault.reveal&target_id=${id}`, { token: ws.apiKey });
    expect(audit.body.meta.total).toBe(2);
    const refusal = (userId: string) => ({
      outcome: 'failure',
      actor: { type: 'user', id: userId },
      target: { type: 'vault_object', id },
      details: { reason: 'FORBIDDEN', status: 403 },
    });
    expect(audit.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining(refusal(userIds.viewer as string)),
        expect.objectContaining(refusal(userIds.member as string)),
      ]),
    );
    const row = audit.body.data.find((e: { actor: { id: string } }) => e.actor.id === userIds.viewer);
    expect(row.request_id).toBe(viewer.headers.get('x-request-id'));
  });

  it('audits a reveal of an id that names no object of the workspace, without naming it as the target', async () => {
    const other = await createWorkspace(app);
    const { id } = (await store('theirs', 'not yours', other.apiKey)).body.data;
    for (const asked of [id, 'vlt_00000000000000000000000000']) {
      const res = await call(app, 'GET', `/api/v1/vault/objects/${asked}/reveal`, { token: ws.apiKey });
      expect(res.status).toBe(404);
      const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=vault.reveal&outcome=failure&per_page=100', {
        token: ws.apiKey,
      });
      const row = failures.body.data.find((e: { request_id: string }) => e.request_id === res.headers.get('x-request-id'));
      expect(row).toMatchObject({ actor: { type: 'api_key' }, target: null, details: { reason: 'NOT_FOUND', status: 404 } });
    }
  });

  it('refuses duplicate names (any case), bad bodies and unknown ids', async () => {
    await store('Duplicate', 'one');
    expect((await store('duplicate', 'two')).status).toBe(409);
    for (const body of [
      { name: 'x' },
      { name: 'x', value: '' },
      { name: '', value: 'v' },
      { name: 'x', value: 'v', extra: 1 },
      { name: 'x', value: 'é'.repeat(32_769) },
    ]) {
      const res = await call(app, 'POST', '/api/v1/vault/objects/', { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    for (const id of ['vlt_00000000000000000000000000', 'nope']) {
      expect((await call(app, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token: ws.apiKey })).status).toBe(404);
      expect((await call(app, 'DELETE', `/api/v1/vault/objects/${id}`, { token: ws.apiKey })).status).toBe(404);
    }
  });

  it('deletes: the value is gone, the deletion audited', async () => {
    const { id } = (await store('short-lived', 'temporary')).body.data;
    const res = await call(app, 'DELETE', `/api/v1/vault/objects/${id}`, { token: tokens.admin });
    expect(res.body.data).toEqual({ id, deleted: true });
    expect((await call(app, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token: ws.apiKey })).status).toBe(404);
    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=vault.delete&target_id=${id}`, { token: ws.apiKey });
    expect(audit.body.data[0].details).toEqual({ name: 'short-lived' });
  });

  it('encrypts each value under its own data key, bound to its row', async () => {
    const value = `same-${randomUUID()}`;
    const a = (await store('twin-a', value)).body.data.id;
    const b = (await store('twin-b', value)).body.data.id;
    const stored = await rows();
    const [rowA, rowB] = [stored.find((r) => r.id === a) as Row, stored.find((r) => r.id === b) as Row];
    for (const row of [rowA, rowB]) {
      expect(row.ciphertext).not.toContain(value);
      expect(Buffer.from(row.ciphertext.split('.')[3] as string, 'base64url').toString('latin1')).not.toContain(value);
      expect(row.key_id).toBe(app.deps.box.keyId);
    }
    expect(rowA.ciphertext).not.toBe(rowB.ciphertext);
    expect(rowA.wrapped_key).not.toBe(rowB.wrapped_key);
    const envelope = (row: Row) => ({ ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, keyId: row.key_id });
    expect(app.deps.box.openEnvelope(envelope(rowA), `${ws.id}/${a}`)).toBe(value);
    // Moved to another row, a ciphertext or a wrapped key no longer opens.
    expect(() => app.deps.box.openEnvelope(envelope(rowA), `${ws.id}/${b}`)).toThrow();
    expect(() => app.deps.box.openEnvelope({ ...envelope(rowB), ciphertext: rowA.ciphertext }, `${ws.id}/${b}`)).toThrow();
  });
});

/** One app at a time: without DATABASE_URL the tests share a single-connection embedded database. */
describe('vault master-key rotation', () => {
  it('keeps old values readable under VAULT_MASTER_KEY_PREVIOUS; rewrap moves data keys, TOTP and provider secrets to the new key', async () => {
    const before = await startTestApp();
    const ws = await createWorkspace(before);
    const value = `before-rotation-${randomUUID()}`;
    const email = uniqueEmail('rotated');
    let id: string;
    let factor: { id: string; secret: string };
    try {
      id = (await call(before, 'POST', '/api/v1/vault/objects/', { token: ws.apiKey, body: { name: 'rotated', value } })).body.data.id;
      await call(before, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
      const token = (await signIn(before, ws.id, email, PASSWORD)).accessToken;
      const enrolled = await call(before, 'POST', '/api/v1/mfa/factors/totp', { token, body: { name: 'phone' } });
      expect(enrolled.status).toBe(201);
      factor = { id: enrolled.body.data.factor.id, secret: enrolled.body.data.secret };
      const provider = await call(before, 'PUT', '/api/v1/auth/oauth/providers/github', {
        token: ws.apiKey,
        body: { client_id: 'rotation-client', client_secret: 'rotation-client-secret' },
      });
      expect(provider.status).toBe(201);
    } finally {
      await before.close();
    }

    const newKey = randomBytes(32).toString('base64');
    const rotated = await startTestApp({ VAULT_MASTER_KEY: newKey, VAULT_MASTER_KEY_PREVIOUS: TEST_MASTER_KEY });
    try {
      const rows = () =>
        rotated.deps.orm.em
          .getConnection()
          .execute<Row[]>(
            'select id, workspace_id, ciphertext, wrapped_key, key_id from vault_objects where workspace_id = ? order by id',
            [ws.id],
          );
      const revealed = await call(rotated, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token: ws.apiKey });
      expect(revealed.body.data.value).toBe(value);
      const fresh = await call(rotated, 'POST', '/api/v1/vault/objects/', {
        token: ws.apiKey,
        body: { name: 'after-rotation', value: 'new' },
      });
      expect(fresh.status).toBe(201);
      expect(new Set((await rows()).map((r) => r.key_id)).size).toBe(2);

      expect(await rewrapVault(rotated.deps.orm, rotated.deps.box, ws.id)).toBe(1);
      expect(await rewrapVault(rotated.deps.orm, rotated.deps.box, ws.id)).toBe(0);
      const onlyNew = new CryptoBox(Buffer.from(newKey, 'base64'));
      for (const row of await rows()) {
        expect(row.key_id).toBe(onlyNew.keyId);
        const envelope = { ciphertext: row.ciphertext, wrappedKey: row.wrapped_key, keyId: row.key_id };
        expect(() => onlyNew.openEnvelope(envelope, `${row.workspace_id}/${row.id}`)).not.toThrow();
      }
      expect((await call(rotated, 'GET', `/api/v1/vault/objects/${id}/reveal`, { token: ws.apiKey })).body.data.value).toBe(value);

      const mfa = SEALED_COLUMNS.find((c) => c.table === 'mfa_factors') as (typeof SEALED_COLUMNS)[number];
      expect(await resealColumn(rotated.deps.orm, rotated.deps.box, mfa, ws.id)).toBe(1);
      expect(await resealColumn(rotated.deps.orm, rotated.deps.box, mfa, ws.id)).toBe(0);
      const [sealed] = await rotated.deps.orm.em
        .getConnection()
        .execute<{ secret: string }[]>('select secret from mfa_factors where id = ?', [factor.id]);
      expect(onlyNew.open((sealed as { secret: string }).secret)).toBe(factor.secret);

      const social = SEALED_COLUMNS.find((c) => c.table === 'social_providers') as (typeof SEALED_COLUMNS)[number];
      expect(await resealColumn(rotated.deps.orm, rotated.deps.box, social, ws.id)).toBe(1);
      const [providerRow] = await rotated.deps.orm.em
        .getConnection()
        .execute<{ secret_sealed: string }[]>('select secret_sealed from social_providers where workspace_id = ?', [ws.id]);
      expect(onlyNew.open((providerRow as { secret_sealed: string }).secret_sealed)).toBe('rotation-client-secret');
      // SAML connections have no secret: the nullable column is skipped, not failed on.
      const sso = SEALED_COLUMNS.find((c) => c.table === 'sso_connections') as (typeof SEALED_COLUMNS)[number];
      expect(await resealColumn(rotated.deps.orm, rotated.deps.box, sso, ws.id)).toBe(0);
    } finally {
      await rotated.close();
    }
  });
});
