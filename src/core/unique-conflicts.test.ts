import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { call } from '../../test/helpers/http.ts';
import { copies, releaseTogether } from '../../test/helpers/race.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../test/helpers/workspace.ts';

/**
 * Identical creates released together pass the service's own "is it taken?" check side by side, and
 * the unique index refuses all but one: each loser's 409 names the field as a sequential duplicate's does.
 */
const N = 10;

describe('a unique index that refuses a racing create names the taken field', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Unique races');
  });
  afterAll(async () => {
    await app?.close();
  });

  async function race(path: string, body: object) {
    const results = await releaseTogether(
      app.url,
      copies(N, {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ws.apiKey}` },
        body: JSON.stringify(body),
      }),
    );
    const sequential = await call(app, 'POST', path, { token: ws.apiKey, body });
    expect(sequential.status).toBe(409);
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array<number>(N - 1).fill(409)]);
    for (const loser of results.filter((r) => r.status === 409)) {
      expect(loser.json.error.code).toBe('CONFLICT');
      expect(loser.json.error.details).toEqual(sequential.body.error.details);
    }
    return sequential.body.error.details;
  }

  it('users: one email', async () => {
    const details = await race('/api/v1/users', { email: uniqueEmail('racer'), password: 'unique race passphrase' });
    expect(details).toEqual([{ path: 'email', message: 'belongs to another user' }]);
  });

  it('groups: one name', async () => {
    const details = await race('/api/v1/groups', { name: 'Racing Team' });
    expect(details).toEqual([{ path: 'name', message: 'is already taken' }]);
  });

  it('roles: one key', async () => {
    const details = await race('/api/v1/roles', { key: 'racer', name: 'Racer', permissions: [] });
    expect(details).toEqual([{ path: 'key', message: 'is already taken' }]);
  });

  it('roles: one name, no key (the key made from it): the name is named, as the caller sent it', async () => {
    const details = await race('/api/v1/roles', { name: 'Keyless Racer', permissions: [] });
    expect(details).toEqual([{ path: 'name', message: 'is already taken' }]);
  });

  it('users: ten users renamed to one email at once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i += 1) {
      const created = await call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        body: { email: uniqueEmail('renamed'), password: 'unique race passphrase' },
      });
      ids.push(created.body.data.id);
    }
    const email = uniqueEmail('target');
    const body = JSON.stringify({ email });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${ws.apiKey}` };
    const results = await releaseTogether(
      app.url,
      ids.map((id) => ({ method: 'PATCH', path: `/api/v1/users/${id}`, headers, body })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array<number>(N - 1).fill(409)]);
    for (const loser of results.filter((r) => r.status === 409)) {
      expect(loser.json.error.details).toEqual([{ path: 'email', message: 'belongs to another user' }]);
    }
  });

  it('group members: one user added twice', async () => {
    const group = await call(app, 'POST', '/api/v1/groups', { token: ws.apiKey, body: { name: 'Members race' } });
    const user = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('member'), password: 'unique race passphrase' },
    });
    const details = await race(`/api/v1/groups/${group.body.data.id}/members`, { user_id: user.body.data.id });
    expect(details).toEqual([{ path: 'user_id', message: 'is already a member' }]);
  });

  it('invitations: one pending email', async () => {
    const details = await race('/api/v1/invitations', { email: uniqueEmail('invitee') });
    expect(details).toEqual([{ path: 'email', message: 'has a pending invitation' }]);
  });

  it('attributes: one key', async () => {
    const details = await race('/api/v1/idp-attributes', { key: 'racing_number', name: 'Racing number' });
    expect(details).toEqual([{ path: 'key', message: 'is already taken' }]);
  });
});
