import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError, type FieldProblem } from './errors.ts';
import { uniqueViolationConflict } from './unique-conflicts.ts';

/**
 * A body member the schema does not know, named by its own path as every other field problem is
 * (`{"path": "font"}`, `{"path": "owner.nickname"}`), so a client can point at the field it sent.
 */
export function unknownFieldProblem(path: string): FieldProblem {
  return { path, message: 'is not a known field' };
}

/**
 * One entry per field and message: zod may report one rule twice (a URL that is neither https nor on a
 * domain name fails both parts of `z.url`'s check, each with the check's one message). zod reports the
 * unknown members of an object as one issue on the object; each becomes an entry of its own.
 */
function zodProblems(error: z.core.$ZodError): FieldProblem[] {
  const problems = new Map<string, FieldProblem>();
  const add = (problem: FieldProblem) => problems.set(`${problem.path}\n${problem.message}`, problem);
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) add(unknownFieldProblem([...path, key].join('.')));
    } else {
      add({ path: path.join('.') || '(body)', message: issue.message });
    }
  }
  return [...problems.values()];
}

function isZodError(value: unknown): value is z.core.$ZodError {
  return value instanceof z.core.$ZodError;
}

/** Socket failures: the database (or another store) is down, restarting or unreachable. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": class 08 (connection exception),
 * 57P01–57P03 (shut down by an operator or a crash, or still starting up), 53300 (too many connections).
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/**
 * node-postgres says so in words only; MikroORM puts the statement before them (`select … - Connection …`).
 * knex answers the next query of a transaction whose connection died with "Transaction query already
 * complete": the outage, seen one statement later.
 */
const UNAVAILABLE_MESSAGE =
  /(?:^|- )(Connection terminated( unexpectedly| due to connection timeout)?|Connection ended unexpectedly|Client (has encountered a connection error|was closed) and is not queryable|Transaction query already complete, run with DEBUG=knex:tx for more info)$/;

/**
 * Whether an error, or one of its causes, says the database could not be reached or went away
 * mid-request. Such a request did nothing durable that it could report (a transaction whose COMMIT was
 * cut off may have committed; the client sees a failure either way and may retry), so it is a fast
 * 503, never a 500 and never a wait.
 */
export function isUnavailable(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
    if (name === 'KnexTimeoutError' || name === 'ConnectionException') return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export function unavailableError(cause?: unknown): AppError {
  return new AppError('UNAVAILABLE', 'The service is briefly unavailable; try again in a few seconds', {
    headers: { 'Retry-After': '2' },
    cause,
  });
}

/**
 * A deadlock (40P01) or a serialization failure (40001) anywhere in `error`'s chain of causes:
 * PostgreSQL aborted the transaction for what ran beside it, not for what the request asked. MikroORM's
 * `DeadlockException` keeps the code; one raised by a deferred constraint comes from the COMMIT.
 */
export function abortedByConcurrency(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const { code } = cause as { code?: unknown };
    if (code === '40P01' || code === '40001') return true;
  }
  return false;
}

/**
 * A transaction still aborted for what ran beside it once it was run again (core/trpc.ts
 * `retryingAborted`): nothing of it was committed and the same request may well pass a moment later.
 */
export function contendedError(cause?: unknown): AppError {
  return new AppError('UNAVAILABLE', 'The request kept colliding with concurrent changes and was not completed; try again', {
    headers: { 'Retry-After': '1' },
    cause,
  });
}

/**
 * Turns anything a door caught into the AppError the client sees. This is the single place where
 * framework and driver errors become codes; whatever is not recognised is INTERNAL and its detail
 * stays in the log. A database that cannot be reached is UNAVAILABLE (503), its cause logged too; so
 * is a transaction PostgreSQL aborted for a deadlock or a serialization failure after its retries.
 */
export function toAppError(error: unknown): { appError: AppError; internal: boolean } {
  if (error instanceof AppError) return { appError: error, internal: false };
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof AppError) return { appError: cause, internal: false };
  if (isUnavailable(cause)) return { appError: unavailableError(cause), internal: true };
  if (abortedByConcurrency(cause)) return { appError: contendedError(cause), internal: true };
  if (cause instanceof UniqueConstraintViolationException) {
    return { appError: uniqueViolationConflict(cause), internal: false };
  }
  if (error instanceof TRPCError) {
    switch (error.code) {
      case 'BAD_REQUEST':
        if (isZodError(cause)) {
          return {
            appError: new AppError('BAD_REQUEST', 'The request is invalid', { details: zodProblems(cause) }),
            internal: false,
          };
        }
        return { appError: new AppError('BAD_REQUEST', error.message), internal: false };
      case 'PARSE_ERROR':
        return { appError: new AppError('BAD_REQUEST', 'The request body is not valid JSON'), internal: false };
      case 'PAYLOAD_TOO_LARGE':
        return { appError: new AppError('BAD_REQUEST', 'The request body is larger than 1 MiB', { status: 413 }), internal: false };
      case 'UNSUPPORTED_MEDIA_TYPE':
        return { appError: new AppError('BAD_REQUEST', 'Send the body as application/json'), internal: false };
      case 'METHOD_NOT_SUPPORTED':
        return { appError: new AppError('BAD_REQUEST', 'This method is not supported here', { status: 405 }), internal: false };
      case 'NOT_FOUND':
        return { appError: new AppError('NOT_FOUND', 'No such resource'), internal: false };
      default:
        break;
    }
  }
  return { appError: new AppError('INTERNAL', 'Something went wrong on our side'), internal: true };
}
