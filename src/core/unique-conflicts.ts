import { AppError } from './errors.ts';
import { takenConflict } from './conflicts.ts';

interface TakenField {
  message: string;
  path: string;
  problem?: string;
}

/**
 * The unique indexes and constraints (src/db/migrations) behind a uniqueness a client can run into,
 * each with the request field it guards and the words the service's own check uses (`takenConflict`
 * at each check), so the loser of two requests racing past that check gets the same 409 `details` as
 * a request that arrives second. A role's key is named `key` here; a role created without one takes
 * it from its `name`, and its create names `name` itself (`uniqueViolationNaming`), as the index cannot
 * tell which the request sent.
 */
const TAKEN_BY_CONSTRAINT: Readonly<Record<string, TakenField>> = {
  users_workspace_id_email_unique: { path: 'email', message: 'A user with this email already exists', problem: 'belongs to another user' },
  roles_workspace_id_key_unique: { path: 'key', message: 'A role with this key already exists' },
  groups_workspace_id_name_unique: { path: 'name', message: 'A group with this name already exists' },
  group_members_group_id_user_id_unique: { path: 'user_id', message: 'This user is already a member', problem: 'is already a member' },
  organization_domains_workspace_id_domain_unique: { path: 'domains', message: 'A domain already belongs to another organization' },
  organization_members_organization_id_user_id_unique: {
    path: 'user_id',
    message: 'This user is already a member of this organization',
    problem: 'is already a member',
  },
  idp_attributes_workspace_id_key_unique: { path: 'key', message: 'An attribute with this key already exists' },
  actions_workspace_id_name_unique: { path: 'name', message: 'An action with this name already exists' },
  vault_objects_workspace_id_name_unique: { path: 'name', message: 'A vault object with this name already exists' },
  invitations_one_pending: { path: 'email', message: 'This email already has a pending invitation', problem: 'has a pending invitation' },
};

/** The constraint PostgreSQL named (node-postgres's `constraint`, which MikroORM's exception copies), on the error or a cause. */
function violatedConstraint(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const { constraint } = current as { constraint?: unknown };
    if (typeof constraint === 'string') return constraint;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The 409 of a unique violation of `constraint`, naming `path` (the member the request sent) rather
 * than the constraint's own field; undefined for any other error, which the caller rethrows.
 */
export function uniqueViolationNaming(error: unknown, constraint: string, path: string): AppError | undefined {
  const taken = TAKEN_BY_CONSTRAINT[constraint];
  if (!taken || violatedConstraint(error) !== constraint) return undefined;
  return takenConflict(path, taken.message, taken.problem);
}

/**
 * 409 for a unique violation the database refused: naming the field when the constraint guards one
 * (a race that passed the service's own check), else the generic conflict without `details`.
 */
export function uniqueViolationConflict(error: unknown): AppError {
  const constraint = violatedConstraint(error);
  const taken = constraint === undefined ? undefined : TAKEN_BY_CONSTRAINT[constraint];
  if (taken) return takenConflict(taken.path, taken.message, taken.problem);
  return new AppError('CONFLICT', 'A resource with these values already exists');
}
