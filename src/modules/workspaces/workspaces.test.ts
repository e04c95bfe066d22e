import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { whileHashesWait } from '../../../test/helpers/hashing.ts';
import { call } from '../../../test/helpers/http.ts';
import { cliDatabase, runCli, type CliDatabase } from '../../../test/helpers/cli.ts';
import { uniqueEmail } from '../../../test/helpers/workspace.ts';

describe('POST /platform/v1/workspaces', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('creates a workspace with owner and API key (201, CONTRACT shape); the key works at once', async () => {
    const email = uniqueEmail('founder');
    const res = await call(app, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: 'Initech', owner: { email, password: 'founder password' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toEqual({
      workspace: { id: expect.stringMatching(/^wsp_/), name: 'Initech' },
      api_key: expect.stringMatching(/^sk_/),
      owner: { id: expect.stringMatching(/^usr_/), email },
    });
    const users = await call(app, 'GET', '/api/v1/users', { token: res.body.data.api_key });
    expect(users.body.data.map((u: { email: string }) => u.email)).toEqual([email]);
  });

  it('holds no database connection while an owner password waits for Argon2id', async () => {
    // More workspaces waiting for a hashing slot than the pool has connections.
    const { meanwhile, results } = await whileHashesWait(
      6,
      (i) =>
        call(app, 'POST', '/platform/v1/workspaces', {
          token: PLATFORM_TOKEN,
          body: { name: `Queued ${i}`, owner: { email: uniqueEmail('queued'), password: 'founder password' } },
        }),
      () => call(app, 'GET', '/readyz'),
    );
    expect(meanwhile.status).toBe(200);
    expect(results.map((res) => res.status)).toEqual(results.map(() => 201));
  });

  it('generates and returns an owner password when none is given', async () => {
    const res = await call(app, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: 'No password', owner: { email: uniqueEmail('owner') } },
    });
    expect(res.status).toBe(201);
    expect(res.body.data.owner.password).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('refuses a missing token (401 UNAUTHORIZED), a wrong one (401 INVALID_TOKEN), an API key, and bad bodies', async () => {
    const body = { name: 'X', owner: { email: uniqueEmail() } };
    const none = await call(app, 'POST', '/platform/v1/workspaces', { body });
    expect([none.status, none.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const wrong = await call(app, 'POST', '/platform/v1/workspaces', { token: 'x'.repeat(30), body });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    const created = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body });
    const asKey = await call(app, 'POST', '/platform/v1/workspaces', { token: created.body.data.api_key, body });
    expect([asKey.status, asKey.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    for (const bad of [
      {},
      { name: '' },
      { name: 'X', owner: { email: 'nope' } },
      { name: 'X', owner: { email: uniqueEmail() }, plan: 'pro' },
    ]) {
      const res = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
  });
});

describe('platform API without PLATFORM_API_TOKEN', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ PLATFORM_API_TOKEN: '' });
  });
  afterAll(() => app.close());

  it('does not exist (404)', async () => {
    const res = await call(app, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: 'X', owner: { email: uniqueEmail() } },
    });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    const otherMethod = await call(app, 'GET', '/platform/v1/workspaces', { token: PLATFORM_TOKEN });
    expect([otherMethod.status, otherMethod.body.error.code, otherMethod.headers.get('allow')]).toEqual([404, 'NOT_FOUND', null]);
  });
});

describe('npm run cli -- workspaces create', () => {
  let database: CliDatabase;
  beforeAll(async () => {
    database = await cliDatabase('workspaces_cli');
  });
  afterAll(() => database?.drop());

  it('prints the created workspace as one JSON line, and rejects bad arguments', async () => {
    const email = uniqueEmail('cli');
    const made = await runCli(
      database.env,
      'workspaces',
      'create',
      '--name',
      'From CLI',
      '--owner-email',
      email,
      '--owner-password',
      'cli password 1',
    );
    expect(made.code, made.stderr).toBe(0);
    const lines = made.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0] as string);
    expect(created).toEqual({
      workspace: { id: expect.stringMatching(/^wsp_/), name: 'From CLI' },
      api_key: expect.stringMatching(/^sk_/),
      owner: { id: expect.stringMatching(/^usr_/), email },
    });
    const refused = await runCli(database.env, 'workspaces', 'create', '--name', 'X', '--owner-email', 'bad');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('owner.email');
  }, 120_000);
});
