import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockDataDir } from './embedded.ts';

/** A pid no process holds any more: a child that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid as number;
}

describe('the data directory lock', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'identity-lock-'));
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('lets one of two contenders take over a stale lock, never both', async () => {
    const lock = join(dataDir, 'embedded.pid');
    await writeFile(lock, `${deadPid()}`);
    // The first contender judges the lock stale, then stalls before removing it; the second takes
    // the lock over meanwhile. The first must not remove the second's lock and hold the directory too.
    let resume: () => void = () => undefined;
    const stalled = new Promise<void>((resolve) => (resume = resolve));
    let judged: () => void = () => undefined;
    const firstJudged = new Promise<void>((resolve) => (judged = resolve));
    const first = lockDataDir(dataDir, {
      beforeTakeover: async () => {
        judged();
        await stalled;
      },
    });
    await firstJudged;
    const unlockSecond = await lockDataDir(dataDir);
    const held = await readFile(lock, 'utf8');
    resume();
    await expect(first).rejects.toThrow(`is in use by process ${process.pid}`);
    expect(await readFile(lock, 'utf8')).toBe(held);
    await unlockSecond();
    await expect(readFile(lock, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes over a takeover guard left by a process that died holding it', async () => {
    await writeFile(join(dataDir, 'embedded.pid'), `${deadPid()}`);
    await writeFile(join(dataDir, 'embedded.pid.takeover'), `${deadPid()}`);
    const unlock = await lockDataDir(dataDir);
    expect((await readFile(join(dataDir, 'embedded.pid'), 'utf8')).split(' ')[0]).toBe(String(process.pid));
    await expect(readFile(join(dataDir, 'embedded.pid.takeover'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
    await unlock();
  });
});
