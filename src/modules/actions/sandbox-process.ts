import { z } from 'zod';
import { IsolateRunner, SandboxUnavailableError } from './isolate-runner.ts';

/**
 * The sandbox process: forked by sandbox.ts with `--no-node-snapshot` and an empty environment (no
 * database URL, no master key: nothing worth reaching even if code got out of its isolate). It runs
 * the isolates and answers over the IPC channel; when V8 aborts it (an isolate that outgrew its heap
 * in one allocation), the server notices the exit, refuses what was in flight and starts another.
 */

const settings = z
  .object({ timeoutMs: z.number().int().positive(), memoryMb: z.number().int().min(8), packageName: z.string().min(1) })
  .parse(JSON.parse(process.argv[2] ?? '{}'));

const request = z.discriminatedUnion('op', [
  z.object({ id: z.number(), op: z.literal('ping') }),
  z.object({ id: z.number(), op: z.literal('check'), code: z.string() }),
  z.object({ id: z.number(), op: z.literal('run'), code: z.string(), event: z.unknown() }),
]);

const runner = new IsolateRunner({
  timeoutMs: settings.timeoutMs,
  memoryMb: settings.memoryMb,
  nodeSnapshotDisabled: process.execArgv.includes('--no-node-snapshot'),
  importer: () => import(settings.packageName),
  onCatastrophicError: (message) => {
    // isolated-vm's advice: the process can no longer be trusted. The server starts a new one.
    process.stderr.write(`isolated-vm catastrophic error: ${message}\n`);
    process.abort();
  },
});

function reply(message: unknown): void {
  if (process.connected) process.send?.(message);
}

process.on('message', (raw: unknown) => {
  const parsed = request.safeParse(raw);
  if (!parsed.success) return;
  const message = parsed.data;
  const work =
    message.op === 'ping'
      ? runner.ensureAvailable().then(() => null)
      : message.op === 'check'
        ? runner.check(message.code)
        : runner.runPostLogin(message.code, message.event as Parameters<IsolateRunner['runPostLogin']>[1]);
  work.then(
    (value) => reply({ id: message.id, ok: true, value }),
    (error: unknown) => {
      if (error instanceof SandboxUnavailableError) reply({ id: message.id, ok: false, unavailable: error.message });
      else reply({ id: message.id, ok: false, error: error instanceof Error ? error.message : String(error) });
    },
  );
});

// The server went away: nothing is left to answer to.
process.on('disconnect', () => process.exit(0));

reply({ ready: true });
