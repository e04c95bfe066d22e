import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { SlowFirstSequencer } from './test/sequencer.ts';

/**
 * With DATABASE_URL the files run in parallel against real PostgreSQL, each worker on its own copy of
 * the database (test/global-setup.ts). Without it they share one embedded PostgreSQL, which has a
 * single backend, so they run one file at a time.
 *
 * Vitest's default is one worker fewer than the cores, which is one on a 2-core machine: the files
 * wait on PostgreSQL, Argon2id and spawned servers much of the time, so two workers there finish the
 * suite in about half the time.
 */
const embedded = !process.env.DATABASE_URL;

const APP_FILES = ['src/**/*.test.ts', 'test/**/*.test.ts'];
/** The files that vi.mock or vi.unmock a module (see the 'app-isolated' project). */
const MOCKING_FILES = ['src/modules/webhooks/webhooks.dns.test.ts', 'src/core/passwords.test.ts', 'test/production-hashing.test.ts'];

export default defineConfig({
  resolve: {
    // graphql 16 ships ESM (via "module") and CJS; Node loads the CJS one for Pothos and yoga, so the
    // tests must load that same copy or schemas built by one are foreign to the other.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    pool: 'forks',
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
    // The slowest files start first, so that the two workers finish together (test/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    projects: [
      {
        // A worker loads the app's modules once for all the files it runs (isolate: false): loading
        // them again for every file was a third of the suite's time (docs/decisions.md, "The test
        // files share their worker's modules"). Each file still builds its own app, database rows
        // and servers; files that replace a module (vi.mock) run in the project below.
        extends: true,
        test: {
          name: 'app',
          include: APP_FILES,
          exclude: [...configDefaults.exclude, 'test/faults/**', ...MOCKING_FILES],
          globalSetup: ['test/global-setup.ts'],
          // Cheap Argon2id in the tests' own process (see the file); spawned servers keep the service's.
          setupFiles: ['test/setup/cheap-hashing.ts'],
          isolate: false,
          fileParallelism: !embedded,
          testTimeout: 30_000,
          hookTimeout: 90_000,
        },
      },
      {
        // Files that replace a module with vi.mock or restore one with vi.unmock: a module another
        // file of the worker loaded first would keep its old imports, so these get their own.
        extends: true,
        test: {
          name: 'app-isolated',
          include: MOCKING_FILES,
          // The embedded database serves one file at a time: after the app's files there.
          sequence: { groupOrder: embedded ? 1 : 0 },
          globalSetup: ['test/global-setup.ts'],
          setupFiles: ['test/setup/cheap-hashing.ts'],
          fileParallelism: !embedded,
          testTimeout: 30_000,
          hookTimeout: 90_000,
        },
      },
      {
        // The fault suite starts its own PostgreSQL, Redis and app processes and measures latencies,
        // so it runs after the rest (groupOrder), one file at a time, with the machine to itself.
        extends: true,
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
