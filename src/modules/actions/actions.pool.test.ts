import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { gate } from '../../../test/helpers/gate.ts';

const ALLOW = 'exports.onExecutePostLogin = async (event, api) => {};';

/**
 * Deploying compiles the code in the sandbox (a second or more while its process starts), and a test
 * run lasts up to ACTION_TIMEOUT_MS. On the embedded database the service has one connection: done
 * inside the call's transaction, either held every other request until the sandbox answered. Run on a
 * pool of one whatever the database, the sandbox held at a gate.
 */
describe('actions deployed and tested while the sandbox is slow', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let held = gate();
  beforeAll(async () => {
    app = await startTestApp({}, { poolSize: 1 });
    ws = await createWorkspace(app);
  });
  afterEach(() => {
    held.open();
    vi.restoreAllMocks();
  });
  afterAll(() => app.close());

  /** The sandbox's `method` waits at a fresh gate, then answers as it would have. */
  function holdSandbox(method: 'check' | 'runPostLogin') {
    held = gate();
    const sandbox = app.deps.sandbox;
    const real = sandbox[method].bind(sandbox) as (...args: unknown[]) => Promise<unknown>;
    const waiting = held;
    vi.spyOn(sandbox, method).mockImplementation((async (...args: unknown[]) => {
      waiting.start();
      await waiting.opened;
      return real(...args);
    }) as never);
    return waiting;
  }

  it('holds no database connection while the code compiles for a deploy, and deploys the code it checked', async () => {
    const created = await call(app, 'POST', '/api/v1/actions/', { token: ws.apiKey, body: { name: 'Slow to compile', code: ALLOW } });
    const sandbox = holdSandbox('check');
    const deploying = call(app, 'POST', `/api/v1/actions/${created.body.data.id}/deploy`, { token: ws.apiKey, body: {} });
    await sandbox.started;
    expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
    // New code saved while the deploy compiles the old: the old is deployed, the new stays a draft.
    const newer = 'exports.onExecutePostLogin = async (event, api) => { api.accessToken.setCustomClaim("v", 2); };';
    const edited = await call(app, 'PATCH', `/api/v1/actions/${created.body.data.id}`, { token: ws.apiKey, body: { code: newer } });
    expect(edited.status).toBe(200);
    sandbox.open();
    const deployed = await deploying;
    expect([deployed.status, deployed.body.data?.deployed_version, deployed.body.data?.status, deployed.body.data?.code]).toEqual([
      200,
      1,
      'draft',
      newer,
    ]);
    const [row] = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ deployed_code: string }[]>('select deployed_code from actions where id = ?', [created.body.data.id]);
    expect(row?.deployed_code).toBe(ALLOW);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=action.deploy&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.filter((e: { target: { id: string } | null }) => e.target?.id === created.body.data.id)).toHaveLength(1);
  });

  it('holds no database connection while a test run lasts, and audits the run', async () => {
    const created = await call(app, 'POST', '/api/v1/actions/', { token: ws.apiKey, body: { name: 'Slow to run', code: ALLOW } });
    const sandbox = holdSandbox('runPostLogin');
    const testing = call(app, 'POST', `/api/v1/actions/${created.body.data.id}/test`, { token: ws.apiKey, body: {} });
    await sandbox.started;
    expect((await call(app, 'GET', '/api/v1/users', { token: ws.apiKey })).status).toBe(200);
    sandbox.open();
    const tested = await testing;
    expect([tested.status, tested.body.data?.decision]).toEqual([200, 'allow']);
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=action.test&per_page=100', { token: ws.apiKey });
    expect(audit.body.data.filter((e: { target: { id: string } | null }) => e.target?.id === created.body.data.id)).toHaveLength(1);
  });
});
