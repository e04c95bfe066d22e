import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError, type FieldProblem } from './errors.ts';

function zodProblems(error: z.core.$ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(body)',
    message: issue.message,
  }));
}

function isZodError(value: unknown): value is z.core.$ZodError {
  return value instanceof z.core.$ZodError;
}

/**
 * Turns anything a door caught into the AppError the client sees. This is the single place where
 * framework and driver errors become codes; whatever is not recognised is INTERNAL and its detail
 * stays in the log.
 */
export function toAppError(error: unknown): { appError: AppError; internal: boolean } {
  if (error instanceof AppError) return { appError: error, internal: false };
  const cause = error instanceof TRPCError ? error.cause : error;
  if (cause instanceof AppError) return { appError: cause, internal: false };
  if (cause instanceof UniqueConstraintViolationException) {
    return { appError: new AppError('CONFLICT', 'A resource with these values already exists'), internal: false };
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
        return { appError: new AppError('BAD_REQUEST', 'Send the body as application/json', { status: 415 }), internal: false };
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
