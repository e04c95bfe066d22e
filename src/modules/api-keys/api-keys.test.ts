import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { loadConfig } from '../../config.ts';
import { createWorkspace as createWorkspaceRow } from '../workspaces/workspaces.service.ts';

describe('secret API keys', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    other = await createWorkspace(app);
  });
  afterAll(() => app.close());

  it('shows a new key once; the list never shows it again', async () => {
    const created = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: 'CI deploys' } });
    expect(created.status).toBe(201);
    expect(created.body.data.key).toMatch(/^sk_[A-Za-z0-9_-]{40,}$/);
    expect(created.body.data.prefix).toBe(created.body.data.key.slice(0, 10));
    const list = await call(app, 'GET', '/api/v1/api-keys', { token: ws.apiKey });
    expect(list.status).toBe(200);
    const listed = list.body.data.find((k: { id: string }) => k.id === created.body.data.id);
    expect(listed).toEqual({
      id: created.body.data.id,
      name: 'CI deploys',
      prefix: created.body.data.prefix,
      created_at: created.body.data.created_at,
    });
    expect(JSON.stringify(list.body)).not.toContain(created.body.data.key);
  });

  it('takes any BOOTSTRAP_API_KEY the configuration accepts as a bearer credential, punctuation included', async () => {
    const chosen = `sk_chosen!#$%&'*:;<>?@[]^{|}${Date.now()}`;
    expect(loadConfig({ BOOTSTRAP_API_KEY: chosen }).BOOTSTRAP_API_KEY).toBe(chosen);
    const created = await app.deps.orm.em
      .fork()
      .transactional((em) =>
        createWorkspaceRow(
          em,
          { name: 'Chosen key', owner: { email: `chosen-${Date.now()}@example.com`, password: 'chosen-password' }, apiKey: chosen },
          { ip: null, userAgent: null, requestId: null },
        ),
      );
    const res = await call(app, 'GET', `/api/v1/users/${created.owner.id}`, { token: chosen });
    expect([res.status, res.body.data?.id]).toEqual([200, created.owner.id]);
    const wrong = await call(app, 'GET', `/api/v1/users/${created.owner.id}`, { token: `${chosen}!` });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('a new key acts in its own workspace only; a revoked key is INVALID_TOKEN at once', async () => {
    const created = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: 'temporary' } });
    const key = created.body.data.key as string;
    expect((await call(app, 'GET', `/api/v1/users/${ws.owner.id}`, { token: key })).status).toBe(200);
    expect((await call(app, 'GET', `/api/v1/users/${other.owner.id}`, { token: key })).status).toBe(404);

    const revoked = await call(app, 'DELETE', `/api/v1/api-keys/${created.body.data.id}`, { token: ws.apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toEqual({ id: created.body.data.id, deleted: true });
    const after = await call(app, 'GET', '/api/v1/users', { token: key });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('INVALID_TOKEN');
    const again = await call(app, 'DELETE', `/api/v1/api-keys/${created.body.data.id}`, { token: ws.apiKey });
    expect(again.status).toBe(404);
  });

  it('cannot revoke another workspace’s key (404) and rejects a nameless key (400)', async () => {
    const theirs = await call(app, 'POST', '/api/v1/api-keys', { token: other.apiKey, body: { name: 'theirs' } });
    const res = await call(app, 'DELETE', `/api/v1/api-keys/${theirs.body.data.id}`, { token: ws.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect((await call(app, 'GET', '/api/v1/users', { token: theirs.body.data.key })).status).toBe(200);
    const nameless = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: '  ' } });
    expect(nameless.status).toBe(400);
    expect((await call(app, 'DELETE', '/api/v1/api-keys/not-an-id', { token: ws.apiKey })).status).toBe(404);
  });

  it('revokes a key once when two revokes arrive together: one 200, the other 404, one audit row', async () => {
    const created = await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name: 'revoked twice' } });
    const id = created.body.data.id as string;
    const answers = await Promise.all([1, 2, 3].map(() => call(app, 'DELETE', `/api/v1/api-keys/${id}`, { token: ws.apiKey })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404, 404]);
    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=api_key.revoke&outcome=success&target_id=${id}`, {
      token: ws.apiKey,
    });
    expect(audit.body.meta.total).toBe(1);
  });

  it('lists keys a page at a time with meta; bad paging is 400', async () => {
    for (const name of ['page one', 'page two']) {
      expect((await call(app, 'POST', '/api/v1/api-keys', { token: ws.apiKey, body: { name } })).status).toBe(201);
    }
    const all = await call(app, 'GET', '/api/v1/api-keys?per_page=100', { token: ws.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBeGreaterThanOrEqual(3);
    expect(all.body.meta).toEqual({ total: all.body.data.length, page: 1, per_page: 100 });
    const first = await call(app, 'GET', '/api/v1/api-keys', { token: ws.apiKey });
    expect(first.body.meta).toEqual({ total: all.body.data.length, page: 1, per_page: 20 });
    const second = await call(app, 'GET', '/api/v1/api-keys?page=2&per_page=1', { token: ws.apiKey });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual([all.body.data[1]]);
    expect(second.body.meta).toEqual({ total: all.body.data.length, page: 2, per_page: 1 });
    for (const query of ['page=0', 'per_page=101', 'per_page=abc', 'page=abc']) {
      const bad = await call(app, 'GET', `/api/v1/api-keys?${query}`, { token: ws.apiKey });
      expect([bad.status, bad.body.error.code], query).toEqual([400, 'BAD_REQUEST']);
    }
  });
});
