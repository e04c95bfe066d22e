import { defineConfig } from 'vitest/config';

/**
 * With DATABASE_URL the files run in parallel against real PostgreSQL. Without it they share one
 * embedded PostgreSQL, which has a single backend, so they run one file at a time.
 */
const embedded = !process.env.DATABASE_URL;

export default defineConfig({
  resolve: {
    // graphql 16 ships ESM (via "module") and CJS; Node loads the CJS one for Pothos and yoga, so the
    // tests must load that same copy or schemas built by one are foreign to the other.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    fileParallelism: !embedded,
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: ['default'],
  },
});
