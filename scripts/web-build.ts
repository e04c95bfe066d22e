import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * Builds the web app (src/web → dist/web) when its build is missing or older than its sources, so
 * `npm start` on a fresh clone serves the dashboard and the browser tests run against current code.
 * `node --import tsx scripts/web-build.ts` does it from the shell (npm's prestart).
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = [join(ROOT, 'src/web'), join(ROOT, 'src/core/permissions.ts'), join(ROOT, 'package-lock.json')];
const BUILT = join(ROOT, 'dist/web/index.html');
const VITE = join(ROOT, 'node_modules/vite/bin/vite.js');

async function newestChange(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.mtimeMs;
  const entries = await readdir(path);
  const times = await Promise.all(entries.map((entry) => newestChange(join(path, entry))));
  return Math.max(info.mtimeMs, ...times);
}

export async function webBuildIsCurrent(): Promise<boolean> {
  if (!existsSync(BUILT)) return false;
  const built = (await stat(BUILT)).mtimeMs;
  const sources = await Promise.all(SOURCES.filter((p) => existsSync(p)).map(newestChange));
  return Math.max(...sources) <= built;
}

function viteBuild(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITE, 'build', '--config', 'src/web/vite.config.ts', '--logLevel', 'warn'], {
      cwd: ROOT,
      stdio: 'inherit',
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`vite build exited with ${code}`))));
  });
}

/** Builds when needed; without Vite (a production install) says how the dashboard can be had and goes on. */
export async function ensureWebBuild(): Promise<'current' | 'built' | 'unavailable'> {
  if (await webBuildIsCurrent()) return 'current';
  if (!existsSync(VITE)) {
    console.warn('The dashboard is not built and Vite is not installed (npm ci without --omit=dev, then npm run build:web).');
    return 'unavailable';
  }
  console.log('Building the dashboard (src/web → dist/web)…');
  await viteBuild();
  return 'built';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  ensureWebBuild().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
