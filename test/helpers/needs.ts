import { inject } from 'vitest';

/**
 * Tests that need a service a bare machine's run does not have: registered with `register` (vitest's
 * `it` or `describe`) where the service is there; elsewhere nothing is registered (the run counts no
 * skipped test) and one line names each test left out and what it needs, so a run on the embedded
 * database without Redis says what it did not run and why instead of dropping it in silence.
 */
function registeredWhere<T extends (name: string, ...rest: never[]) => unknown>(available: boolean, register: T, needs: string): T {
  if (available) return register;
  const leftOut = (name: string) => {
    console.info(`not run here: "${name}" needs ${needs}`);
  };
  return leftOut as unknown as T;
}

/**
 * A PostgreSQL server (DATABASE_URL): `why` says what of it the test uses that the embedded database,
 * one backend behind one connection, cannot give (a second connection holding a lock, two instances).
 */
export function needsPostgres<T extends (name: string, ...rest: never[]) => unknown>(register: T, why: string): T {
  return registeredWhere(!inject('embedded'), register, `a PostgreSQL server (DATABASE_URL): ${why}`);
}

/** Redis (REDIS_URL). */
export function needsRedis<T extends (name: string, ...rest: never[]) => unknown>(register: T, why: string): T {
  return registeredWhere(Boolean(process.env.REDIS_URL), register, `Redis (REDIS_URL): ${why}`);
}

/** PostgreSQL and Redis both (DATABASE_URL and REDIS_URL). */
export function needsPostgresAndRedis<T extends (name: string, ...rest: never[]) => unknown>(register: T, why: string): T {
  return registeredWhere(
    Boolean(process.env.DATABASE_URL && process.env.REDIS_URL),
    register,
    `PostgreSQL and Redis (DATABASE_URL, REDIS_URL): ${why}`,
  );
}
