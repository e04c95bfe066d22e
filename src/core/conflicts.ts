import { AppError, type FieldProblem } from './errors.ts';

/**
 * A request field whose value another resource holds already (an email, a role key, a group name),
 * named by its path as a 400's field problems are (`unknownFieldProblem`), so a client can show the
 * conflict under the field that caused it.
 */
export function takenFieldProblem(path: string, problem = 'is already taken'): FieldProblem {
  return { path, message: problem };
}

/** 409 CONFLICT about the value of one request field, with that field in `details` (`problem` follows the field's name). */
export function takenConflict(path: string, message: string, problem?: string): AppError {
  return new AppError('CONFLICT', message, { details: [takenFieldProblem(path, problem)] });
}
