import { DeadlockException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { isUnavailable, toAppError } from './error-normalize.ts';

/** Errors shaped as node-postgres, knex and MikroORM raise them when PostgreSQL goes away. */
function pgError(message: string, code?: string): Error {
  return Object.assign(new Error(message), code ? { code } : {});
}

describe('toAppError: a database that cannot be reached', () => {
  const outages = {
    'connection refused (stopped)': pgError('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    'killed mid-query (immediate shutdown)': pgError('terminating connection due to administrator command', '57P01'),
    'still starting up': pgError('the database system is starting up', '57P03'),
    'connection lost': pgError('Connection terminated unexpectedly'),
    'connecting timed out while it restarts': pgError('Connection terminated due to connection timeout'),
    'a client the outage closed': new DriverException(pgError('insert into x - Client was closed and is not queryable')),
    'connection lost, as MikroORM reports it': new DriverException(pgError('select 1 - Connection terminated unexpectedly')),
    'the pool timed out': Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
      name: 'KnexTimeoutError',
    }),
    'too many connections': pgError('sorry, too many clients already', '53300'),
    'the next statement of a transaction whose connection died': new DriverException(
      pgError('Transaction query already complete, run with DEBUG=knex:tx for more info'),
    ),
  };

  for (const [name, cause] of Object.entries(outages)) {
    it(`${name}: 503 UNAVAILABLE with Retry-After, on every door`, () => {
      expect(isUnavailable(cause)).toBe(true);
      const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
      for (const error of [cause, wrapped]) {
        const { appError } = toAppError(error);
        expect([appError.appCode, appError.status]).toEqual(['UNAVAILABLE', 503]);
        expect(appError.headers['Retry-After']).toMatch(/^\d+$/);
        expect(appError.message).not.toMatch(/select|ECONN|terminat/i);
      }
    });
  }

  it('leaves other failures as they were: conflicts 409, the unknown 500', () => {
    expect(toAppError(new UniqueConstraintViolationException(pgError('duplicate key', '23505'))).appError.appCode).toBe('CONFLICT');
    for (const error of [
      new Error('boom'),
      pgError('syntax error at or near "selec"', '42601'),
      pgError('Connection terminated by the user x'),
    ]) {
      expect(isUnavailable(error)).toBe(false);
      expect(toAppError(error).appError.appCode).toBe('INTERNAL');
    }
  });
});

describe('toAppError: a transaction PostgreSQL aborted for what ran beside it', () => {
  it('a deadlock or a serialization failure (after the retries) is 503 UNAVAILABLE with Retry-After: 1, without its SQL', () => {
    const aborts = [
      new DeadlockException(pgError('update roles set … - deadlock detected', '40P01')),
      new DriverException(pgError('COMMIT; - could not serialize access due to concurrent update', '40001')),
    ];
    for (const cause of aborts) {
      const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: cause.message, cause });
      for (const error of [cause, wrapped]) {
        const { appError, internal } = toAppError(error);
        expect([appError.appCode, appError.status, appError.headers['Retry-After'], internal]).toEqual(['UNAVAILABLE', 503, '1', true]);
        expect(appError.message).not.toMatch(/deadlock|serialize|COMMIT|update/i);
      }
    }
  });
});
