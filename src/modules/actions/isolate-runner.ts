import { z } from 'zod';

/**
 * Runs actions in isolated-vm (a separate V8 isolate: its own heap, memory limit and timeout). Every
 * run gets a fresh isolate and context, so nothing survives from one sign-in to the next, and nothing
 * of the host is handed in: no callbacks, no references, only a JSON string that the isolate parses
 * into its own objects. The `api` the code calls is built inside the isolate and only records what
 * was asked; the host reads the record back as a JSON string and checks it. There is no `require`,
 * `import()`, network, timers or file system in there to begin with.
 *
 * This runs in the sandbox process (sandbox-process.ts), never in the server: V8 cannot always
 * recover from an isolate that outgrows its heap (one `new Array(2 ** 26).fill(0)` aborts the whole
 * process), so the server talks to it through sandbox.ts and survives such a crash.
 */

/** The parts of isolated-vm used here, so type checking does not depend on the optional package. */
interface IvmScript {
  run(context: IvmContext, options: { timeout: number }): Promise<unknown>;
  release(): void;
}
interface IvmContext {
  eval(code: string, options: { timeout: number }): Promise<unknown>;
  evalClosure(code: string, args: unknown[], options: { timeout: number }): Promise<unknown>;
  release(): void;
}
interface IvmIsolate {
  compileScript(code: string, options: { filename: string }): Promise<IvmScript>;
  createContext(): Promise<IvmContext>;
  dispose(): void;
  readonly isDisposed: boolean;
}
export interface IvmModule {
  Isolate: new (options: { memoryLimit: number; onCatastrophicError?: (message: string) => void }) => IvmIsolate;
}

/** How the package is loaded: a dynamic import, so an install without it still runs everything else. */
export type IvmImporter = () => Promise<unknown>;

function isIvmModule(value: unknown): value is IvmModule {
  return typeof value === 'object' && value !== null && typeof (value as { Isolate?: unknown }).Isolate === 'function';
}

/** Actions cannot run in this process; the message says why. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
}

export interface RunnerOptions {
  /** CPU budget of one run, milliseconds (top-level code and the handler together). */
  timeoutMs: number;
  /** Heap limit of one run's isolate, MiB (isolated-vm's minimum is 8). */
  memoryMb: number;
  /** Whether node runs with `--no-node-snapshot`; isolated-vm crashes the process on Node 20+ without it. */
  nodeSnapshotDisabled: boolean;
  importer: IvmImporter;
  /** Told when V8 reports an isolate it cannot recover (isolated-vm's `onCatastrophicError`). */
  onCatastrophicError?: (message: string) => void;
}

/**
 * What an action's code sees as `event` at `post-login`. Inside the sandbox it also carries Auth0's
 * names for the same facts: `user.user_id`, `user.app_metadata` (the metadata admins set),
 * `user.user_metadata` (always empty: users cannot set their own) and `authorization.roles`.
 */
export interface PostLoginEvent {
  user: {
    id: string;
    email: string;
    email_verified: boolean;
    name: string | null;
    roles: string[];
    metadata: Record<string, unknown>;
    mfa_enabled: boolean;
  };
  request: { ip: string | null; user_agent: string | null };
  workspace: { id: string };
}

/** Claims an action may not set: they carry the token's own meaning. */
export const RESERVED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti', 'tid', 'sid', 'roles', 'typ'] as const;
const MAX_LOGS = 100;
const MAX_LOG_CHARS = 1000;
const MAX_CLAIMS_CHARS = 4096;
const MAX_REASON_CHARS = 500;
const MAX_RESULT_CHARS = 256 * 1024;
const FILENAME = 'action.js';

export type ActionFailureKind = 'syntax' | 'no_handler' | 'threw' | 'timeout' | 'memory' | 'unfinished' | 'invalid_result' | 'crashed';

export interface ActionFailure {
  kind: ActionFailureKind;
  message: string;
  /** Line in the action's code, when known. */
  line: number | null;
}

const logEntry = z.object({ level: z.enum(['log', 'info', 'warn', 'error', 'debug']), message: z.string().max(MAX_LOG_CHARS + 1) });
export type ActionLog = z.infer<typeof logEntry>;

const failureShape = z.object({ name: z.string(), message: z.string(), line: z.number().int().nullable() });

/** The record the isolate hands back, checked here before anything is believed. */
const resultShape = z.object({
  state: z.enum(['pending', 'done', 'threw', 'no_handler']),
  failure: failureShape.nullable(),
  denied: z.string().max(MAX_REASON_CHARS).nullable(),
  claims: z.record(z.string(), z.json()),
  requireSecondFactor: z.boolean(),
  logs: z.array(logEntry).max(MAX_LOGS + 1),
});

export interface ActionOutcome {
  /** A reason when the code called `api.access.deny`. */
  denied: string | null;
  claims: Record<string, unknown>;
  requireSecondFactor: boolean;
  logs: ActionLog[];
  /** Set when the code could not be run to its end: the sign-in is then refused (fail closed). */
  failure: ActionFailure | null;
  durationMs: number;
}

/**
 * Runs inside the isolate, before the action's code, as the body of a function of one argument (the
 * event as JSON text). It builds `exports`, `console`, the event and the `api`, and two functions the
 * host calls afterwards: `__run` (call the handler) and `__result` (the record, as JSON text). It
 * keeps its own copies of the built-ins it relies on, so code that replaces them cannot change what
 * is reported; the host checks the record anyway.
 */
const BOOTSTRAP = `
  'use strict';
  const g = globalThis;
  const { stringify, parse } = JSON;
  const { defineProperty, freeze, keys, create } = Object;
  const StringOf = String;
  const then = Promise.prototype.then;
  const resolve = Promise.resolve.bind(Promise);
  const exec = RegExp.prototype.exec;
  const reserved = ${JSON.stringify(RESERVED_CLAIMS)};
  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics']) delete g[name];

  const logs = [];
  const record = { denied: null, claims: create(null), requireSecondFactor: false };
  let state = 'pending';
  let failure = null;
  let claimsSize = 2;

  const lineOf = (stack) => {
    const match = typeof stack === 'string' ? exec.call(/action\\.js:(\\d+):\\d+/, stack) : null;
    return match ? Number(match[1]) : null;
  };
  const describe = (error) => {
    try {
      if (error !== null && typeof error === 'object') {
        return { name: StringOf(error.name ?? 'Error').slice(0, 100), message: StringOf(error.message ?? '').slice(0, 1000), line: lineOf(error.stack) };
      }
      return { name: 'Error', message: StringOf(error).slice(0, 1000), line: null };
    } catch {
      return { name: 'Error', message: 'The action threw a value that cannot be described', line: null };
    }
  };
  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      return text === undefined ? StringOf(value) : text;
    } catch {
      return StringOf(value);
    }
  };
  const logger = (level) => (...args) => {
    if (logs.length > ${MAX_LOGS}) return;
    if (logs.length === ${MAX_LOGS}) {
      logs[logs.length] = { level: 'warn', message: 'More output was dropped (at most ${MAX_LOGS} lines are kept)' };
      return;
    }
    let message = args.map(show).join(' ');
    if (message.length > ${MAX_LOG_CHARS}) message = message.slice(0, ${MAX_LOG_CHARS}) + '…';
    logs[logs.length] = { level, message };
  };
  defineProperty(g, 'console', {
    value: freeze({ log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug') }),
  });

  const deepFreeze = (value) => {
    if (value !== null && typeof value === 'object') {
      for (const key of keys(value)) deepFreeze(value[key]);
      freeze(value);
    }
    return value;
  };
  const event = parse($0);
  // Auth0's names for what the event already holds, so Auth0 post-login code reads the same facts.
  event.user.user_id = event.user.id;
  event.user.app_metadata = event.user.metadata;
  event.user.user_metadata = {};
  event.authorization = { roles: event.user.roles };
  deepFreeze(event);

  const setCustomClaim = (name, value) => {
    if (typeof name !== 'string' || name.length === 0 || name.length > 100) {
      throw new TypeError('A claim name is a string of 1 to 100 characters');
    }
    if (reserved.includes(name)) throw new TypeError('The claim "' + name + '" is reserved and cannot be set');
    const json = stringify(value === undefined ? null : value);
    if (json === undefined) throw new TypeError('The value of claim "' + name + '" cannot be written as JSON');
    claimsSize += name.length + json.length + 4;
    if (claimsSize > ${MAX_CLAIMS_CHARS}) throw new RangeError('Custom claims are limited to ${MAX_CLAIMS_CHARS} characters of JSON');
    record.claims[name] = parse(json);
  };
  const requireSecondFactor = () => {
    record.requireSecondFactor = true;
  };

  // Auth0's spellings map onto the same record: multifactor.enable(provider) and the
  // authentication.challengeWith* calls require the second factor (whatever the provider: the
  // service's factor is TOTP); idToken.setCustomClaim adds to the access token, the only token a
  // sign-in issues, under the same rules.
  const api = freeze({
    access: freeze({
      deny(reason) {
        if (record.denied !== null) return;
        const text = reason === undefined || reason === null ? '' : StringOf(reason).slice(0, ${MAX_REASON_CHARS});
        record.denied = text || 'Access denied by an action';
      },
    }),
    accessToken: freeze({ setCustomClaim }),
    idToken: freeze({ setCustomClaim }),
    multifactor: freeze({
      enable(provider, options) {
        requireSecondFactor();
      },
    }),
    authentication: freeze({
      challengeWith(factor, options) {
        requireSecondFactor();
      },
      challengeWithAny(factors) {
        requireSecondFactor();
      },
    }),
    requireSecondFactor,
  });

  const moduleObject = { exports: {} };
  g.module = moduleObject;
  g.exports = moduleObject.exports;

  defineProperty(g, '__run', {
    value: () => {
      const exported = moduleObject.exports;
      const handler =
        (exported !== null && typeof exported === 'object' && exported.onExecutePostLogin) ||
        (g.exports !== null && typeof g.exports === 'object' && g.exports.onExecutePostLogin);
      if (typeof handler !== 'function') {
        state = 'no_handler';
        return;
      }
      let returned;
      try {
        returned = handler(event, api);
      } catch (error) {
        state = 'threw';
        failure = describe(error);
        return;
      }
      then.call(
        resolve(returned),
        () => {
          if (state === 'pending') state = 'done';
        },
        (error) => {
          state = 'threw';
          failure = describe(error);
        },
      );
    },
  });
  defineProperty(g, '__hasHandler', {
    value: () => {
      const exported = moduleObject.exports;
      const handler =
        (exported !== null && typeof exported === 'object' && exported.onExecutePostLogin) ||
        (g.exports !== null && typeof g.exports === 'object' && g.exports.onExecutePostLogin);
      return typeof handler === 'function';
    },
  });
  defineProperty(g, '__result', {
    value: () => stringify({ state, failure, denied: record.denied, claims: record.claims, requireSecondFactor: record.requireSecondFactor, logs }),
  });
`;

/** isolated-vm's own message when a run passes its `timeout`. */
const TIMED_OUT = /^Script execution timed out\.?$/;
const STACK_LINE = /action\.js:(\d+):\d+/;
const SYNTAX_POSITION = /\s*\[action\.js:(\d+):(\d+)\]\s*$/;

/** A syntax error from compiling the action, with the line it points at. */
export interface CompileProblem {
  message: string;
  line: number | null;
  column: number | null;
}

function syntaxProblem(error: unknown): CompileProblem | null {
  if (!(error instanceof Error) || error.name !== 'SyntaxError') return null;
  const position = SYNTAX_POSITION.exec(error.message);
  return {
    message: error.message.replace(SYNTAX_POSITION, ''),
    line: position ? Number(position[1]) : null,
    column: position ? Number(position[2]) : null,
  };
}

/** What a host-side exception from isolated-vm means for the action that caused it. */
function hostFailure(error: unknown, isolate: IvmIsolate): ActionFailure {
  const message = error instanceof Error ? error.message : String(error);
  // isolated-vm disposes an isolate that passes its memory limit; nothing else here disposes one early.
  if (isolate.isDisposed) return { kind: 'memory', message: 'The action used more memory than it may', line: null };
  if (TIMED_OUT.test(message)) return { kind: 'timeout', message: 'The action ran longer than it may', line: null };
  const syntax = syntaxProblem(error);
  if (syntax) return { kind: 'syntax', message: syntax.message, line: syntax.line };
  const name = error instanceof Error ? error.name : 'Error';
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const line = STACK_LINE.exec(stack);
  return { kind: 'threw', message: `${name}: ${message}`.slice(0, 1000), line: line ? Number(line[1]) : null };
}

export class IsolateRunner {
  private loaded: Promise<IvmModule> | null = null;

  constructor(private readonly options: RunnerOptions) {}

  /** isolated-vm, loaded once; SandboxUnavailableError when it cannot be used here. */
  private ivm(): Promise<IvmModule> {
    this.loaded ??= this.load();
    return this.loaded;
  }

  private async load(): Promise<IvmModule> {
    if (!this.options.nodeSnapshotDisabled && Number(process.versions.node.split('.')[0]) >= 20) {
      throw new SandboxUnavailableError('the sandbox process must run node with --no-node-snapshot');
    }
    let loaded: unknown;
    try {
      loaded = await this.options.importer();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new SandboxUnavailableError(`the optional isolated-vm package cannot be loaded (${reason.replace(/ imported from .*$/s, '')})`);
    }
    const candidate = (loaded as { default?: unknown }).default ?? loaded;
    if (!isIvmModule(candidate)) {
      throw new SandboxUnavailableError('the isolated-vm package found is not usable');
    }
    return candidate;
  }

  /** Throws SandboxUnavailableError when actions cannot run here; resolves otherwise. */
  async ensureAvailable(): Promise<void> {
    await this.ivm();
  }

  /** A fresh isolate with its context and the bootstrap in place, disposed by `use`'s end. */
  private async withIsolate<T>(event: PostLoginEvent, use: (isolate: IvmIsolate, context: IvmContext) => Promise<T>): Promise<T> {
    const ivm = await this.ivm();
    const isolate = new ivm.Isolate({
      memoryLimit: this.options.memoryMb,
      ...(this.options.onCatastrophicError ? { onCatastrophicError: this.options.onCatastrophicError } : {}),
    });
    try {
      const context = await isolate.createContext();
      await context.evalClosure(BOOTSTRAP, [JSON.stringify(event)], { timeout: this.options.timeoutMs });
      return await use(isolate, context);
    } finally {
      if (!isolate.isDisposed) isolate.dispose();
    }
  }

  /**
   * Compiles the code and runs its top level in a fresh isolate, as deploying does: a syntax error
   * answers its line, and code that does not export `onExecutePostLogin` (or fails before it does)
   * is refused too. Answers null when the code can be deployed.
   */
  async check(code: string): Promise<CompileProblem | null> {
    return this.withIsolate(SAMPLE_EVENT, async (isolate, context) => {
      let script: IvmScript;
      try {
        script = await isolate.compileScript(code, { filename: FILENAME });
      } catch (error) {
        const syntax = syntaxProblem(error);
        if (syntax) return syntax;
        throw error;
      }
      try {
        await script.run(context, { timeout: this.options.timeoutMs });
      } catch (error) {
        const failure = hostFailure(error, isolate);
        const where = failure.line ? ` (line ${failure.line})` : '';
        return { message: `The code failed when loaded${where}: ${failure.message}`, line: failure.line, column: null };
      }
      const hasHandler = await context.eval('__hasHandler()', { timeout: this.options.timeoutMs });
      if (hasHandler !== true) {
        return { message: 'The code must set exports.onExecutePostLogin to a function', line: null, column: null };
      }
      return null;
    });
  }

  /**
   * Runs the action's `onExecutePostLogin(event, api)` in a fresh isolate within the time and memory
   * limits. Never throws for anything the code does: a syntax error, a throw, a timeout, a memory
   * overrun or an unfinished promise come back as `failure` (and the caller refuses the sign-in).
   * Only an unavailable sandbox throws (SandboxUnavailableError).
   */
  async runPostLogin(code: string, event: PostLoginEvent): Promise<ActionOutcome> {
    const started = performance.now();
    const outcome = (partial: Omit<ActionOutcome, 'durationMs'>): ActionOutcome => ({
      ...partial,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    });
    const failed = (failure: ActionFailure, logs: ActionLog[] = []) =>
      outcome({ denied: null, claims: {}, requireSecondFactor: false, logs, failure });
    await this.ivm();
    return this.withIsolate(event, async (isolate, context) => {
      const deadline = performance.now() + this.options.timeoutMs;
      const remaining = () => Math.max(1, Math.ceil(deadline - performance.now()));
      try {
        const script = await isolate.compileScript(code, { filename: FILENAME });
        await script.run(context, { timeout: remaining() });
        await context.eval('__run()', { timeout: remaining() });
      } catch (error) {
        const failure = hostFailure(error, isolate);
        return failed(failure, isolate.isDisposed ? [] : await this.logsOf(context));
      }
      const result = await this.resultOf(context);
      if (!result) return failed({ kind: 'invalid_result', message: 'The action reported a result that cannot be read', line: null });
      const logs = result.logs;
      if (result.state === 'no_handler') {
        return failed({ kind: 'no_handler', message: 'The code must set exports.onExecutePostLogin to a function', line: null }, logs);
      }
      if (result.state === 'threw') {
        const thrown = result.failure ?? { name: 'Error', message: 'The action failed', line: null };
        return failed({ kind: 'threw', message: `${thrown.name}: ${thrown.message}`, line: thrown.line }, logs);
      }
      if (result.state === 'pending') {
        return failed({ kind: 'unfinished', message: 'The action returned a promise that never settled', line: null }, logs);
      }
      const claims = Object.fromEntries(Object.entries(result.claims).filter(([name]) => !isReservedClaim(name)));
      return outcome({ denied: result.denied, claims, requireSecondFactor: result.requireSecondFactor, logs, failure: null });
    });
  }

  private async resultOf(context: IvmContext): Promise<z.infer<typeof resultShape> | null> {
    let text: unknown;
    try {
      text = await context.eval('__result()', { timeout: this.options.timeoutMs });
    } catch {
      // The code broke its own record (or the isolate is gone): the run counts as failed.
      return null;
    }
    if (typeof text !== 'string' || text.length > MAX_RESULT_CHARS) return null;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // Not JSON: the same, a failed run.
      return null;
    }
    const parsed = resultShape.safeParse(json);
    return parsed.success ? parsed.data : null;
  }

  /** What the code logged before it failed, when the isolate is still there to ask. */
  private async logsOf(context: IvmContext): Promise<ActionLog[]> {
    return (await this.resultOf(context))?.logs ?? [];
  }
}

export function isReservedClaim(name: string): boolean {
  return (RESERVED_CLAIMS as readonly string[]).includes(name);
}

/** The event `check` runs the top level with, and the test endpoint's defaults. */
export const SAMPLE_EVENT: PostLoginEvent = {
  user: {
    id: 'usr_00000000000000000000000000',
    email: 'jane@example.com',
    email_verified: true,
    name: 'Jane Example',
    roles: ['member'],
    metadata: {},
    mfa_enabled: false,
  },
  request: { ip: '203.0.113.7', user_agent: 'Mozilla/5.0 (sample)' },
  workspace: { id: 'wsp_00000000000000000000000000' },
};
