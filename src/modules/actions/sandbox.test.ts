import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.ts';
import { SAMPLE_EVENT, type ActionOutcome } from './isolate-runner.ts';
import { ActionSandbox } from './sandbox.ts';

/**
 * The sandbox from the server's side, one threat at a time. Every escape attempt must fail closed
 * (a `failure`, which refuses the sign-in), within its limit, with nothing of the host in the answer,
 * and the sandbox must keep working afterwards.
 */
const TIMEOUT_MS = 100;
const log = createLogger('silent');
const sandbox = new ActionSandbox({ timeoutMs: TIMEOUT_MS, memoryMb: 32, log });
/** The same memory limit with time to spare, so that only memory can stop an allocation (a loaded machine allocates slowly). */
const roomySandbox = new ActionSandbox({ timeoutMs: 10_000, memoryMb: 32, log });
afterAll(() => Promise.all([sandbox.close(), roomySandbox.close()]));

const handler = (body: string) => `exports.onExecutePostLogin = async (event, api) => {\n${body}\n};`;
const run = (code: string) => sandbox.runPostLogin(code, SAMPLE_EVENT);

/** Nothing of the server's process may show in what comes back. */
function expectNoHostLeak(outcome: ActionOutcome): void {
  const text = JSON.stringify(outcome);
  expect(text).not.toContain(process.cwd());
  expect(text).not.toMatch(/postgres:\/\/|redis:\/\/|node_modules|VAULT|DATABASE_URL/i);
}

function expectFailedClosed(outcome: ActionOutcome, kind: string): void {
  expect(outcome.failure?.kind).toBe(kind);
  expect(outcome.denied).toBeNull();
  expect(outcome.claims).toEqual({});
  expect(outcome.requireSecondFactor).toBe(false);
  expectNoHostLeak(outcome);
}

describe('action sandbox', () => {
  it('runs an action: its decision, claims, step-up flag and console output come back', async () => {
    const outcome = await run(
      handler(`
        console.log('signing in', event.user.email, { roles: event.user.roles });
        console.warn('workspace', event.workspace.id);
        api.accessToken.setCustomClaim('https://example.com/plan', { tier: 'gold' });
        if (event.user.roles.includes('member')) api.requireSecondFactor();`),
    );
    expect(outcome.failure).toBeNull();
    expect(outcome.denied).toBeNull();
    expect(outcome.claims).toEqual({ 'https://example.com/plan': { tier: 'gold' } });
    expect(outcome.requireSecondFactor).toBe(true);
    expect(outcome.logs).toEqual([
      { level: 'log', message: 'signing in jane@example.com {"roles":["member"]}' },
      { level: 'warn', message: `workspace ${SAMPLE_EVENT.workspace.id}` },
    ]);
    expect(outcome.durationMs).toBeGreaterThan(0);
  });

  it('denies with the reason given', async () => {
    const outcome = await run(handler(`api.access.deny('Sign-ins from this network are blocked');`));
    expect(outcome.failure).toBeNull();
    expect(outcome.denied).toBe('Sign-ins from this network are blocked');
  });

  it('refuses reserved claims (the action then fails)', async () => {
    for (const claim of ['sub', 'roles', 'tid', 'exp', 'iss', 'aud']) {
      const outcome = await run(handler(`api.accessToken.setCustomClaim('${claim}', 'admin');`));
      expectFailedClosed(outcome, 'threw');
      expect(outcome.failure?.message).toContain(`"${claim}" is reserved`);
    }
  });

  it('this.constructor.constructor("return process")() finds no process', async () => {
    for (const body of [
      `return this.constructor.constructor('return process')();`,
      `return (function () {}).constructor('return process')().env;`,
      `return api.access.deny.constructor('return process')().mainModule;`,
    ]) {
      const outcome = await run(handler(body));
      expectFailedClosed(outcome, 'threw');
      expect(outcome.failure?.message).toBe('ReferenceError: process is not defined');
    }
  });

  it('has no require, no import(), no network, no timers and no host objects', async () => {
    const required = await run(handler(`require('fs');`));
    expectFailedClosed(required, 'threw');
    expect(required.failure?.message).toBe('ReferenceError: require is not defined');

    const imported = await run(handler(`await import('fs');`));
    expectFailedClosed(imported, 'threw');

    const fetched = await run(handler(`await fetch('http://127.0.0.1:9/');`));
    expectFailedClosed(fetched, 'threw');
    expect(fetched.failure?.message).toBe('ReferenceError: fetch is not defined');

    const globals = await run(
      handler(`
        const names = Object.getOwnPropertyNames(globalThis);
        const shadow = this.constructor.constructor('return this')();
        console.log(JSON.stringify(names.filter((n) => !/^[A-Z]/.test(n)).sort()));
        console.log([typeof process, typeof require, typeof module.require, typeof fetch, typeof XMLHttpRequest, typeof WebSocket,
          typeof setTimeout, typeof setImmediate, typeof queueMicrotask, typeof WebAssembly, typeof SharedArrayBuffer, typeof Atomics,
          typeof Buffer, typeof global, shadow === globalThis].join(' '));`),
    );
    expect(globals.failure).toBeNull();
    const ownNames = JSON.parse(globals.logs[0]?.message as string) as string[];
    for (const name of ['process', 'require', 'fetch', 'setTimeout', 'global', 'Buffer']) expect(ownNames).not.toContain(name);
    expect(globals.logs[1]?.message).toBe(
      'undefined undefined undefined undefined undefined undefined undefined undefined undefined undefined undefined undefined undefined undefined true',
    );
  });

  it('stops an endless loop at its time limit, at the top level and in the handler', async () => {
    for (const code of ['while (true) {}', handler('while (true) {}'), handler('await null; for (;;) {}')]) {
      const started = performance.now();
      const outcome = await run(code);
      expectFailedClosed(outcome, 'timeout');
      expect(performance.now() - started).toBeLessThan(TIMEOUT_MS * 10 + 2000);
    }
  });

  it('fails a handler whose promise never settles (there are no timers to settle it)', async () => {
    expectFailedClosed(await run(`exports.onExecutePostLogin = () => new Promise(() => {});`), 'unfinished');
  });

  it('stops a 1 GB allocation at the memory limit, and keeps working afterwards', async () => {
    // Each of these is a different way V8 meets the limit: a RangeError inside the isolate, the
    // isolate disposed by isolated-vm, or a V8 abort that takes the sandbox process down with it.
    const attempts = [
      `new Uint8Array(1024 * 1024 * 1024).fill(1);`,
      `const chunks = []; while (true) chunks.push(new Array(1024 * 1024).fill(1));`,
      `const big = new Array(1024 * 1024 * 1024 / 8).fill(0); return big.length;`,
    ];
    for (const body of attempts) {
      const started = performance.now();
      const outcome = await roomySandbox.runPostLogin(handler(body), SAMPLE_EVENT);
      expect(outcome.failure, body).not.toBeNull();
      expect(['threw', 'memory', 'crashed']).toContain(outcome.failure?.kind);
      expect(outcome.claims).toEqual({});
      expectNoHostLeak(outcome);
      expect(performance.now() - started, body).toBeLessThan(15_000);
    }
    const after = await roomySandbox.runPostLogin(handler(`api.accessToken.setCustomClaim('still', 'working');`), SAMPLE_EVENT);
    expect(after.failure).toBeNull();
    expect(after.claims).toEqual({ still: 'working' });
  });

  it('keeps nothing from one run to the next (fresh isolate and context)', async () => {
    const first = await run(`globalThis.leftover = 'secret'; Object.prototype.polluted = 1; ${handler('')}`);
    expect(first.failure).toBeNull();
    const second = await run(handler(`console.log(typeof leftover, typeof ({}).polluted);`));
    expect(second.logs).toEqual([{ level: 'log', message: 'undefined undefined' }]);
  });

  it('gives the code a frozen copy of the event', async () => {
    const outcome = await run(handler(`event.user.roles.push('owner');`));
    expectFailedClosed(outcome, 'threw');
    expect(outcome.failure?.message).toMatch(/^TypeError: /);
  });

  it('reports a throw with its line, and a missing handler', async () => {
    const thrown = await run(handler(`\n\nthrow new Error('no luck');`));
    expectFailedClosed(thrown, 'threw');
    expect(thrown.failure).toMatchObject({ message: 'Error: no luck', line: 4 });
    expectFailedClosed(await run('const nothing = 1;'), 'no_handler');
  });

  it('keeps at most 100 log lines of 1000 characters', async () => {
    const outcome = await run(handler(`for (let i = 0; i < 500; i++) console.log('x'.repeat(5000));`));
    expect(outcome.failure).toBeNull();
    expect(outcome.logs).toHaveLength(101);
    expect(outcome.logs[0]?.message).toHaveLength(1001);
    expect(outcome.logs[100]).toEqual({ level: 'warn', message: 'More output was dropped (at most 100 lines are kept)' });
  });

  it('checks code for deploying: a syntax error answers its line', async () => {
    expect(await sandbox.check(handler('return 1;'))).toBeNull();
    expect(await sandbox.check('exports.onExecutePostLogin = async () => {\n  let x = ;\n};')).toEqual({
      message: "Unexpected token ';'",
      line: 2,
      column: 11,
    });
    expect((await sandbox.check('const nothing = 1;'))?.message).toContain('exports.onExecutePostLogin');
    expect((await sandbox.check('while (true) {}'))?.message).toContain('longer than it may');
  });
});

describe('action sandbox without isolated-vm', () => {
  const missing = new ActionSandbox({ timeoutMs: TIMEOUT_MS, memoryMb: 32, log, packageName: 'isolated-vm-not-installed' });
  afterAll(() => missing.close());

  it('answers 503 with a clear message', async () => {
    for (const use of [
      () => missing.ensureAvailable(),
      () => missing.check(handler('')),
      () => missing.runPostLogin(handler(''), SAMPLE_EVENT),
    ]) {
      const error = await use().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ appCode: 'UNAVAILABLE', status: 503 });
      expect((error as Error).message).toContain('isolated-vm');
    }
  });
});
