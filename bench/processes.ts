import { spawn, type ChildProcess } from 'node:child_process';

/**
 * The environment the benchmarked server runs with: production mode, the load generator's addresses
 * trusted from loopback, and a fixed master key, so a second run on the same database can open the
 * signing keys the first one sealed.
 */
export function serverEnv(port: number, dataDir: string): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    TRUST_PROXY: 'loopback',
    NODE_ENV: 'production',
    BASE_URL: '',
    VAULT_MASTER_KEY: process.env.VAULT_MASTER_KEY ?? Buffer.alloc(32, 42).toString('base64'),
  };
}

/** Starts `node <args>` and waits for its `listening` log line (60 s at most); its output is kept for the error. */
export async function startProcess(args: string[], env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const deadline = Date.now() + 60_000;
  while (!out.includes('"msg":"listening"')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`process did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
