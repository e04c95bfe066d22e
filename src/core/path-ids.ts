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

/**
 * Whether every problem of a refused input is in a member that REST takes from the path (an id too
 * long, or holding characters no id has): CONTRACT says a malformed id is 404, so such an input names
 * no resource, on every door (REST, tRPC and GraphQL call the same procedure). Only when every problem
 * is there; a bad body member next to it is still the caller's 400 to fix.
 */
export function namesNoResource(error: unknown, names: Set<string>): boolean {
  if (names.size === 0) return false;
  if (error instanceof UnstorableTextError) return error.members.every((member) => names.has(member));
  if (!(error instanceof TRPCError) || error.code !== 'BAD_REQUEST' || !(error.cause instanceof z.core.$ZodError)) return false;
  const issues = error.cause.issues;
  return issues.length > 0 && issues.every((issue) => typeof issue.path[0] === 'string' && names.has(issue.path[0]));
}

/** What an id that names nothing is answered, whether it is malformed or only unknown. */
export function noSuchResource(): AppError {
  return new AppError('NOT_FOUND', 'No such resource');
}
