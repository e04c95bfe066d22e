import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { ActionOutcome, CompileProblem, PostLoginEvent } from './isolate-runner.ts';

/**
 * The server's side of the action sandbox. Actions run in a separate node process
 * (sandbox-process.ts, started on first use and kept), because V8 cannot always recover from an
 * isolate that outgrows its memory limit: one hostile `new Array(2 ** 26).fill(0)` aborts whatever
 * process holds the isolate. Here that process is the sandbox, not the server: its runs in flight
 * fail closed, and the next run starts a new one.
 *
 * The sandbox process is where `--no-node-snapshot` is needed (isolated-vm on Node 20+), so it is
 * given that flag itself; the server needs no special flags. When isolated-vm is not installed (it is
 * an optional dependency that compiles from source), every use answers 503 and nothing else changes.
 */

const ENTRY = fileURLToPath(new URL('./sandbox-process.ts', import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

export interface SandboxOptions {
  timeoutMs: number;
  memoryMb: number;
  log: Logger;
  /** The package the sandbox process loads; tests name a missing one to see the 503. */
  packageName?: string;
}

const logShape = z.object({ level: z.enum(['log', 'info', 'warn', 'error', 'debug']), message: z.string() });
const failureShape = z.object({
  kind: z.enum(['syntax', 'no_handler', 'threw', 'timeout', 'memory', 'unfinished', 'invalid_result', 'crashed']),
  message: z.string(),
  line: z.number().int().nullable(),
});
/** The sandbox process is not trusted further than its answers' shape. */
const outcomeShape = z.object({
  denied: z.string().nullable(),
  claims: z.record(z.string(), z.json()),
  requireSecondFactor: z.boolean(),
  logs: z.array(logShape),
  failure: failureShape.nullable(),
  durationMs: z.number(),
});
const problemShape = z.object({ message: z.string(), line: z.number().int().nullable(), column: z.number().int().nullable() }).nullable();
const replyShape = z.union([
  z.object({ ready: z.literal(true) }),
  z.object({ id: z.number(), ok: z.literal(true), value: z.unknown() }),
  z.object({ id: z.number(), ok: z.literal(false), unavailable: z.string() }),
  z.object({ id: z.number(), ok: z.literal(false), error: z.string() }),
]);

type Request = { op: 'ping' } | { op: 'check'; code: string } | { op: 'run'; code: string; event: PostLoginEvent };

/** The sandbox process ended (or stopped answering) while a request was in flight. */
class SandboxCrashed extends Error {
  override readonly name = 'SandboxCrashed';
  constructor(readonly timedOut: boolean) {
    super(timedOut ? 'The sandbox did not answer in time' : 'The sandbox process stopped');
  }
}

function unavailable(reason: string): AppError {
  return new AppError('UNAVAILABLE', `Actions are unavailable on this server: ${reason}`);
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface Worker {
  process: ChildProcess;
  ready: Promise<void>;
  pending: Map<number, Pending>;
  stderr: string;
}

export class ActionSandbox {
  private worker: Worker | null = null;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SandboxOptions) {}

  private start(): Worker {
    const settings = {
      timeoutMs: this.options.timeoutMs,
      memoryMb: this.options.memoryMb,
      packageName: this.options.packageName ?? 'isolated-vm',
    };
    const child = fork(ENTRY, [JSON.stringify(settings)], {
      cwd: PROJECT_ROOT,
      execArgv: ['--no-node-snapshot', '--import', 'tsx'],
      env: {},
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    });
    let markReady: () => void = () => undefined;
    let failReady: (error: Error) => void = () => undefined;
    const worker: Worker = {
      process: child,
      ready: new Promise<void>((resolve, reject) => {
        markReady = resolve;
        failReady = reject;
      }),
      pending: new Map(),
      stderr: '',
    };
    // Whoever awaits `ready` handles a failure; this only keeps an unawaited one from being reported.
    worker.ready.catch(() => undefined);
    const readyTimer = setTimeout(() => {
      failReady(unavailable('the sandbox process did not start'));
      child.kill('SIGKILL');
    }, READY_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => {
      worker.stderr = (worker.stderr + chunk.toString()).slice(-2000);
    });
    child.on('message', (raw: unknown) => {
      const parsed = replyShape.safeParse(raw);
      if (!parsed.success) return;
      const message = parsed.data;
      if ('ready' in message) {
        clearTimeout(readyTimer);
        markReady();
        return;
      }
      const waiting = worker.pending.get(message.id);
      if (!waiting) return;
      worker.pending.delete(message.id);
      clearTimeout(waiting.timer);
      this.idleCheck(worker);
      if (message.ok) waiting.resolve(message.value);
      else if ('unavailable' in message) waiting.reject(unavailable(message.unavailable));
      else waiting.reject(new Error(message.error));
    });
    child.on('error', (error) => {
      clearTimeout(readyTimer);
      failReady(unavailable(`the sandbox process cannot start (${error.message})`));
    });
    child.on('exit', (code, signal) => {
      clearTimeout(readyTimer);
      failReady(unavailable('the sandbox process stopped while starting'));
      if (this.worker === worker) this.worker = null;
      const inFlight = [...worker.pending.values()];
      worker.pending.clear();
      for (const waiting of inFlight) {
        clearTimeout(waiting.timer);
        waiting.reject(new SandboxCrashed(false));
      }
      if (!this.closed && (inFlight.length > 0 || code !== 0)) {
        this.options.log.warn('actions sandbox process stopped', {
          code,
          signal,
          in_flight: inFlight.length,
          stderr: worker.stderr.trim().split('\n').slice(-5).join(' | '),
        });
      }
    });
    return worker;
  }

  /** No request in flight: the sandbox process must not keep the server (or a test run) alive. */
  private idleCheck(worker: Worker): void {
    if (worker.pending.size > 0) return;
    worker.process.unref();
    worker.process.channel?.unref();
  }

  private async request(request: Request): Promise<unknown> {
    if (this.closed) throw unavailable('the server is shutting down');
    this.worker ??= this.start();
    const worker = this.worker;
    worker.process.ref();
    worker.process.channel?.ref();
    try {
      await worker.ready;
    } catch (error) {
      this.idleCheck(worker);
      throw error;
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // The run's own limit is enforced inside; this only catches a sandbox that stopped answering.
      const timer = setTimeout(
        () => {
          worker.pending.delete(id);
          reject(new SandboxCrashed(true));
          this.recycle(worker);
        },
        this.options.timeoutMs * 3 + 5_000,
      );
      worker.pending.set(id, { resolve, reject, timer });
      worker.process.send({ id, ...request }, (error) => {
        if (!error) return;
        worker.pending.delete(id);
        clearTimeout(timer);
        reject(new SandboxCrashed(false));
      });
    });
  }

  /** A sandbox process that stopped answering is replaced; what it still had in flight fails closed. */
  private recycle(worker: Worker): void {
    if (this.worker === worker) this.worker = null;
    worker.process.kill('SIGKILL');
  }

  /** Throws 503 when actions cannot run on this server. */
  async ensureAvailable(): Promise<void> {
    await this.request({ op: 'ping' });
  }

  /**
   * Compiles the code and runs its top level, as deploying does. Answers the problem (a syntax error
   * and its line, a missing `onExecutePostLogin`, a top level that fails) or null when it deploys.
   */
  async check(code: string): Promise<CompileProblem | null> {
    try {
      return problemShape.parse(await this.request({ op: 'check', code }));
    } catch (error) {
      if (error instanceof SandboxCrashed) {
        const message = error.timedOut
          ? 'The code did not finish loading in time'
          : 'The code stopped the sandbox when loaded (most likely it used too much memory)';
        return { message, line: null, column: null };
      }
      throw error;
    }
  }

  /**
   * Runs `onExecutePostLogin(event, api)` of the code. Whatever the code does comes back as an
   * outcome (a failure included, which callers treat as a refusal); only an unavailable sandbox throws.
   */
  async runPostLogin(code: string, event: PostLoginEvent): Promise<ActionOutcome> {
    const started = performance.now();
    try {
      return outcomeShape.parse(await this.request({ op: 'run', code, event }));
    } catch (error) {
      // Unavailable (503) is the caller's to answer; anything else is a failed run, refused like one.
      if (error instanceof AppError) throw error;
      let kind: 'timeout' | 'crashed' = 'crashed';
      let message = 'The sandbox could not run the action';
      if (error instanceof SandboxCrashed) {
        kind = error.timedOut ? 'timeout' : 'crashed';
        message = error.timedOut
          ? 'The sandbox did not answer in time'
          : 'The action stopped the sandbox (most likely it used too much memory)';
      } else {
        this.options.log.error('actions sandbox answered an error', { error });
      }
      return {
        denied: null,
        claims: {},
        requireSecondFactor: false,
        logs: [],
        failure: { kind, message, line: null },
        durationMs: Math.round((performance.now() - started) * 10) / 10,
      };
    }
  }

  /** Stops the sandbox process (server shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker || worker.process.exitCode !== null || worker.process.signalCode !== null) return;
    const exited = new Promise((resolve) => worker.process.once('exit', resolve));
    worker.process.ref();
    worker.process.kill('SIGTERM');
    await exited;
  }
}
