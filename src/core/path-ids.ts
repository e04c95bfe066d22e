import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { UnstorableTextError } from './storable-text.ts';

const NONE = new Set<string>();
const namesOf = new Map<string, Set<string>>();

/** The parameters of a REST path template (`/api/v1/groups/{id}/members/{user_id}` → `id`, `user_id`), read once per template. */
export function pathParamNames(template: string | undefined): Set<string> {
  if (!template) return NONE;
  let names = namesOf.get(template);
  if (!names) {
    names = new Set(Array.from(template.matchAll(/\{(\w+)\}/g), (match) => match[1] ?? ''));
    namesOf.set(template, names);
  }
  return names;
}

const bodyIdsOf = new Map<readonly string[], Set<string>>();

/** A procedure's `meta.bodyIds` as a set, made once per procedure. */
export function bodyIdNames(members: readonly string[] | undefined): Set<string> {
  if (!members) return NONE;
  let names = bodyIdsOf.get(members);
  if (!names) {
    names = new Set(members);
    bodyIdsOf.set(members, names);
  }
  return names;
}

/** A problem with an id's form (too long, too short, not an id's characters), not its absence or type. */
function malformedIdIssue(issue: z.core.$ZodIssue): boolean {
  return (issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'string';
}

/**
 * Whether every problem of a refused input is in a member that names a resource: one REST takes from
 * the path (an id too long, or holding characters no id has), or a body member the procedure names in
 * `meta.bodyIds` whose value is malformed (a missing one, or a number, is still 400). CONTRACT says a
 * malformed id is 404, so such an input names no resource, on every door (REST, tRPC and GraphQL call
 * the same procedure), as an unknown id does. Only when every problem is there; a bad member next to
 * it is still the caller's 400 to fix, and other members keep their limits.
 */
export function namesNoResource(error: unknown, names: Set<string>, bodyIds: Set<string> = NONE): boolean {
  if (names.size === 0 && bodyIds.size === 0) return false;
  if (error instanceof UnstorableTextError) return error.members.every((member) => names.has(member) || bodyIds.has(member));
  if (!(error instanceof TRPCError) || error.code !== 'BAD_REQUEST' || !(error.cause instanceof z.core.$ZodError)) return false;
  const issues = error.cause.issues;
  return (
    issues.length > 0 &&
    issues.every((issue) => {
      const member = issue.path[0];
      if (typeof member !== 'string') return false;
      return names.has(member) || (bodyIds.has(member) && issue.path.length === 1 && malformedIdIssue(issue));
    })
  );
}

/** What an id that names nothing is answered, whether it is malformed or only unknown. */
export function noSuchResource(): AppError {
  return new AppError('NOT_FOUND', 'No such resource');
}
