import type * as dns from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/**
 * A resolver that answers `slow.example.test` only when the test says so (a slow or unreachable DNS
 * server), and every other name as the system does.
 */
const resolver = vi.hoisted(() => {
  let release: () => void = () => undefined;
  let asked: () => void = () => undefined;
  const state = {
    released: Promise.resolve(),
    asked: Promise.resolve(),
    /** The next lookup of the slow name waits until `release()`; `asked` settles when it starts. */
    hold() {
      state.released = new Promise<void>((resolve) => (release = resolve));
      state.asked = new Promise<void>((resolve) => (asked = resolve));
    },
    release: () => release(),
    lookupStarted: () => asked(),
  };
  return state;
});

vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof dns>();
  const lookup = (async (host: string, options: unknown) => {
    if (host !== 'slow.example.test') return real.lookup(host, options as never);
    resolver.lookupStarted();
    await resolver.released;
    return [{ address: '93.184.215.14', family: 4 }];
  }) as typeof real.lookup;
  return { ...real, lookup, default: { ...real, lookup } };
});

/**
 * Saving an endpoint resolves its host (a private address is refused). The lookup waits on DNS, which
 * may take seconds; on the embedded database the service has one connection, so a lookup inside the
 * call's transaction held every other request until DNS answered. Run on a pool of one whatever the
 * database.
 */
describe('webhook endpoints saved while DNS is slow', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false' }, { poolSize: 1 });
    ws = await createWorkspace(app);
  });
  afterAll(async () => {
    resolver.release();
    await app.close();
  });

  it('holds no database connection while the host is looked up: other requests are answered meanwhile', async () => {
    resolver.hold();
    const creating = call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: 'https://slow.example.test/hook' } });
    await resolver.asked;
    expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
    resolver.release();
    const created = await creating;
    expect([created.status, created.body.data?.url]).toEqual([201, 'https://slow.example.test/hook']);

    const other = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: 'https://93.184.215.14/first' } });
    expect(other.status).toBe(201);
    resolver.hold();
    const updating = call(app, 'PATCH', `/api/v1/webhooks/${other.body.data.id}`, {
      token: ws.apiKey,
      body: { url: 'https://slow.example.test/second', description: 'moved' },
    });
    await resolver.asked;
    expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
    resolver.release();
    const updated = await updating;
    expect([updated.status, updated.body.data?.url, updated.body.data?.description]).toEqual([
      200,
      'https://slow.example.test/second',
      'moved',
    ]);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=webhook.update&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.filter((e: { target: { id: string } | null }) => e.target?.id === other.body.data.id)).toHaveLength(1);
  });
});
