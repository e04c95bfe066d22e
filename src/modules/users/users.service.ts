import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { runStatement, type Statement } from '../../core/sql.ts';
import { addressSearchForm } from '../../core/addresses.ts';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { BatchedLookup, keyedBy, perOwner } from '../../core/batched-lookup.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { likePattern, offsetOf, toPage } from '../../core/pagination.ts';
import { hashPassword } from '../../core/passwords.ts';
import { addAssignment } from '../roles/builtin-roles.ts';
import { Role } from '../roles/role.entity.ts';
import { USER_STATUSES, User, type UserStatus } from './user.entity.ts';
import { USER_COLUMNS, statusAt, statusAtSql, userRowToView, type UserRow } from './user-row.ts';
import type { CreateUserInput, ListUsersInput, UpdateUserInput, UserView } from './users.schema.ts';
import { endUserSessions } from '../auth/sessions.service.ts';
import { retireResetLinks } from '../auth/password.service.ts';
import { guardOutranked, guardOwner } from '../roles/owners.ts';
import type { Principal } from '../../core/auth.ts';
import { emitEvent } from '../events/events.ts';
import { denyOrphanedRequests } from '../iga/close-requests.ts';
import { takenConflict } from '../../core/conflicts.ts';
import { lockAddress, retireInvitationsOf } from '../invitations/retire.ts';
import { differs, mergeMetadata } from '../../core/patch.ts';

export function toUserView(user: User, now: Date, mfaEnabled = false): UserView {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    status: statusAt(user.status, user.lockedUntil, now),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    last_sign_in_at: user.lastSignInAt?.toISOString() ?? null,
    email_verified: user.emailVerified,
    mfa_enabled: mfaEnabled,
    metadata: user.metadata,
  };
}

/** Which of these users hold a verified second factor, in one query for a whole page. */
async function withFactors(em: EntityManager, userIds: string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await em.execute<{ user_id: string }[]>(
    `select distinct user_id from mfa_factors where status = 'Verified' and user_id in (${userIds.map(() => '?').join(', ')})`,
    userIds,
  );
  return new Set(rows.map((r) => r.user_id));
}

/** Builds a user row (password hashed) without saving it; the caller persists it. */
export async function newUser(workspaceId: string, input: CreateUserInput): Promise<User> {
  const now = new Date();
  return Object.assign(new User(), {
    id: newId('usr'),
    workspaceId,
    email: input.email,
    name: input.name ?? null,
    status: 'active',
    passwordHash: await hashPassword(input.password),
    createdAt: now,
    updatedAt: now,
    lastSignInAt: null,
    failedLoginCount: 0,
    lockedUntil: null,
    emailVerified: input.email_verified ?? false,
    metadata: input.metadata ?? {},
  });
}

export async function createUser(scope: AuditScope, input: CreateUserInput, now: Date): Promise<UserView> {
  const { em, workspaceId } = scope;
  if (await em.count(User, { email: input.email })) {
    throw takenConflict('email', 'A user with this email already exists', 'belongs to another user');
  }
  const user = await newUser(workspaceId, input);
  em.persist(user);
  const member = await em.findOneOrFail(Role, { key: 'member' });
  addAssignment(em, workspaceId, user.id, member.id);
  await retireInvitationsOf(scope, user.email, user.id, now);
  recordAudit(scope, {
    eventType: 'user.create',
    target: { type: 'user', id: user.id },
    details: { email: user.email, role: member.key, role_id: member.id },
  });
  emitEvent(scope, 'user.created', { id: user.id, email: user.email, name: user.name, role: member.key, role_id: member.id });
  await em.flush();
  return toUserView(user, user.createdAt);
}

/*
 * The user list is the dashboard's main screen, so it is prepared statements (core/sql.ts): one
 * variant per filter, so each keeps a plan fitted to it (the trigram indexes for `q`).
 * A search reads its matches once: the page and, by a window count over the same matches, the total.
 * Without `q` the matches can be the whole workspace: the total is read from `user_counts` (kept
 * exact by triggers on `users`, Migration20261203010000_user_counts) instead of counted, and the page
 * picks its ids from an index first and then reads only those rows, so the rows an offset skips are
 * never fetched nor their columns computed. An offset still walks the index entries it skips, so a
 * page in the second half walks from the far end (oldest first, `total - offset - limit` entries
 * skipped) and is put back in the list's order: no page walks more than half the list. Total and
 * page are one statement, so the far-end offset comes from the count of the very rows the walk sees.
 */
interface SearchStatements {
  page: Statement;
  count: Statement;
}

function searchStatements(withStatus: boolean): SearchStatements {
  const filters = ['users.workspace_id = $1'];
  // A status is the one shown at the time given after it ($3), so a lapsed lock lists as active.
  if (withStatus) filters.push(`${statusAtSql('$3::timestamptz')} = $2`);
  const q = withStatus ? 4 : 2;
  // Addresses are matched in their stored (punycode) form, names as typed: two patterns.
  filters.push(`(users.email ilike $${q + 1} or users.name ilike $${q})`);
  const where = filters.join(' and ');
  const n = q + 1;
  const name = `users_list_q${withStatus ? '_status' : ''}`;
  return {
    page: {
      name,
      text: `select ${USER_COLUMNS}, count(*) over ()::int as total from users where ${where}
        order by users.id desc limit $${n + 1} offset $${n + 2}`,
    },
    count: { name: `${name}_count`, text: `select count(*)::int as total from users where ${where}` },
  };
}

const SEARCH_STATEMENTS = { plain: searchStatements(false), status: searchStatements(true) };

/*
 * The rows a status filter shows at the time $2 (a lock whose end has passed is stored as `locked` but
 * shown as `active`), in terms an index answers alone: the unfiltered list and `active` (most users)
 * walk users_workspace_id_id_status_index in the list's order, filtering on the status it carries;
 * `locked` and `deactivated` are ranges of users_workspace_id_status_id_index.
 */
const SHOWN_AS: Record<UserStatus | 'any', string | null> = {
  any: null,
  active: `${statusAtSql('$2::timestamptz')} = 'active'`,
  locked: `users.status = 'locked' and (users.locked_until is null or users.locked_until > $2::timestamptz)`,
  deactivated: `users.status = 'deactivated'`,
};

/**
 * A status's total at the time $2, from the counts by stored status and the lapsed locks (stored
 * `locked`, shown `active`), in the terms of SHOWN_AS.
 */
const stored = (status: UserStatus | 'any') =>
  `coalesce((select sum(n) from user_counts where workspace_id = $1${status === 'any' ? '' : ` and status = '${status}'`}), 0)`;
const LAPSED = `(select count(*) from users where workspace_id = $1 and status = 'locked' and locked_until <= $2::timestamptz)`;
const TOTAL_OF: Record<UserStatus | 'any', string> = {
  any: stored('any'),
  active: `${stored('active')} + ${LAPSED}`,
  locked: `${stored('locked')} - ${LAPSED}`,
  deactivated: stored('deactivated'),
};

interface WorkspacePage {
  page: Statement;
  /** Whether the page takes the time ($2) before its limit and offset. */
  takesNow: boolean;
}

/**
 * One statement, one snapshot: the total (a materialized CTE: inlined, it was computed once for
 * each column of `walk` that reads it), which end to walk from (`walk`), and the page's ids from the
 * index alone (`array(…)`: a plan that cannot turn into a join over the table, whatever the generic
 * plan guesses of its limit), then only those rows, left-joined to the total so a page past the end
 * still answers it (one row, no user). Of the two walks only one runs: `from_end` names no column of
 * a table, so each walk's condition on it is a one-time filter and the other walk is never executed.
 * From the far end, the page's rows are the `least(limit, total - offset)` after the
 * `total - offset - limit` oldest; the final order puts them back newest first.
 */
function workspacePage(status: UserStatus | 'any'): WorkspacePage {
  const shown = SHOWN_AS[status];
  const takesNow = TOTAL_OF[status].includes('$2') || (shown?.includes('$2') ?? false);
  const n = takesNow ? 2 : 1;
  const [limit, offset] = [`$${n + 1}::bigint`, `$${n + 2}::bigint`];
  const from = `from users where users.workspace_id = $1${shown ? ` and ${shown}` : ''}`;
  const walks = `(select users.id ${from} and not (select from_end from walk)
      order by users.id desc limit ${limit} offset ${offset})
    union all
    (select users.id ${from} and (select from_end from walk)
      order by users.id asc limit (select far_limit from walk) offset (select far_offset from walk))`;
  return {
    page: {
      name: `users_list${status === 'any' ? '' : `_${status}`}`,
      text: `with total as materialized (select (${TOTAL_OF[status]})::int as n),
        walk as (select n, 2 * ${offset} + ${limit} > n as from_end,
                        greatest(least(${limit}, n - ${offset}), 0) as far_limit,
                        greatest(n - ${offset} - ${limit}, 0) as far_offset
                   from total)
        select walk.n as total, ${USER_COLUMNS}
          from walk left join users on users.id = any(array(${walks}))
         order by users.id desc`,
    },
    takesNow,
  };
}

const WORKSPACE_PAGES = new Map((['any', ...USER_STATUSES] as const).map((status) => [status, workspacePage(status)]));

/** A row of a workspace page: a user with the total, or only the total when the page is past the end. */
type PageRow = { total: number } & (UserRow | { [K in keyof UserRow]: null });

const isUserRow = (row: PageRow): row is { total: number } & UserRow => row.id !== null;

async function countUsers(orm: MikroORM, statement: Statement, params: unknown[]): Promise<number> {
  const [row] = await runStatement<{ total: number }>(orm, statement, params);
  return row?.total ?? 0;
}

export async function listUsers(orm: MikroORM, workspaceId: string, query: ListUsersInput, now: Date) {
  const { limit, offset } = offsetOf(query);
  const at = now.toISOString();
  if (query.q) {
    const statements = query.status ? SEARCH_STATEMENTS.status : SEARCH_STATEMENTS.plain;
    const params: unknown[] = [workspaceId, ...(query.status ? [query.status, at] : [])];
    params.push(likePattern(query.q), likePattern(addressSearchForm(query.q)));
    const rows = await runStatement<UserRow & { total: number }>(orm, statements.page, [...params, limit, offset]);
    const total = rows[0]?.total ?? (offset > 0 ? await countUsers(orm, statements.count, params) : 0);
    return toPage(
      rows.map((row) => userRowToView(row, now)),
      total,
      query,
    );
  }
  const { page, takesNow } = WORKSPACE_PAGES.get(query.status ?? 'any') as WorkspacePage;
  const rows = await runStatement<PageRow>(orm, page, [workspaceId, ...(takesNow ? [at] : []), limit, offset]);
  return toPage(
    rows.filter(isUserRow).map((row) => userRowToView(row, now)),
    rows[0]?.total ?? 0,
    query,
  );
}

/** An id of another workspace, or one that is not a user id at all, is NOT_FOUND. */
export async function findUser(em: EntityManager, id: string): Promise<User> {
  const user = isId('usr', id) ? await em.findOne(User, { id }) : null;
  if (!user) throw new AppError('NOT_FOUND', 'No such user');
  return user;
}

const USERS_BY_ID: Statement = {
  name: 'users_get_many',
  text: `select users.workspace_id, ${USER_COLUMNS}
           from unnest($1::text[], $2::text[]) as k(id, workspace_id)
           join users on users.id = k.id and users.workspace_id = k.workspace_id`,
};

type ScopedUserRow = UserRow & { workspace_id: string };

/**
 * Reads of one user that arrive together share one statement (core/batched-lookup.ts), each keyed by
 * its workspace and id: a row answers only the read of its own workspace.
 */
const userLookup = perOwner(
  (orm: MikroORM) =>
    new BatchedLookup(async (keys) => {
      const pairs = keys.map((key) => key.split(' '));
      const rows = await runStatement<ScopedUserRow>(orm, USERS_BY_ID, [
        pairs.map(([, id]) => id),
        pairs.map(([workspaceId]) => workspaceId),
      ]);
      return keyedBy(rows, (row) => `${row.workspace_id} ${row.id}`);
    }),
);

/** The most frequent read of the API, so a prepared statement rather than an ORM find (core/sql.ts). */
export async function getUser(orm: MikroORM, workspaceId: string, id: string, now: Date): Promise<UserView> {
  const row = isId('usr', id) ? await userLookup(orm).load(`${workspaceId} ${id}`) : undefined;
  if (!row) throw new AppError('NOT_FOUND', 'No such user');
  return userRowToView(row, now);
}

export async function updateUser(scope: AuditScope, principal: Principal, input: UpdateUserInput, now: Date): Promise<UserView> {
  const user = await findUser(scope.em, input.id);
  const changes: Record<string, unknown> = {};
  const newEmail = input.email !== undefined && input.email !== user.email;
  const deactivates = input.status === 'deactivated' && user.status !== 'deactivated';
  // An admin's lock lasts until an admin lifts it (no end time); it replaces a lockout's fifteen minutes.
  const locks = input.status === 'locked' && !(user.status === 'locked' && user.lockedUntil === null);
  if (locks && user.status === 'deactivated') {
    throw new AppError('CONFLICT', 'A deactivated account cannot be locked; reactivate it first');
  }
  // The new address's lock before the owner role's row (retire.ts: the order of the locks): an
  // owner's invitation of the address being accepted holds the lock, then needs that row.
  if (newEmail && input.email !== undefined) await lockAddress(scope.em, scope.workspaceId, input.email);
  if (newEmail || deactivates || locks) {
    await guardOwner(scope.em, principal, user.id, now, { removes: deactivates || locks });
    await guardOutranked(scope.em, principal, user.id, now);
  }
  if (newEmail && input.email !== undefined) {
    if (await scope.em.count(User, { email: input.email, id: { $ne: user.id } })) {
      throw takenConflict('email', 'A user with this email already exists', 'belongs to another user');
    }
    changes.email = { from: user.email, to: input.email };
    Object.assign(user, { email: input.email, emailVerified: false });
    await retireInvitationsOf(scope, input.email, user.id, now);
  }
  if (input.name !== undefined && input.name !== user.name) {
    user.name = input.name;
    changes.name = input.name;
  }
  if (input.status === 'active' && (user.status !== 'active' || user.failedLoginCount > 0)) {
    changes.status = { from: user.status, to: 'active' };
    Object.assign(user, { status: 'active', failedLoginCount: 0, lockedUntil: null });
  }
  if (locks) {
    changes.status = { from: user.status, to: 'locked' };
    Object.assign(user, { status: 'locked', lockedUntil: null });
    // Written before the sessions end: a sign-in racing the lock either committed first (and its
    // session ends here) or waits for this row and is refused.
    await scope.em.flush();
    changes.ended_sessions = await endUserSessions(scope, user.id, now, 'user_locked');
  }
  if (deactivates) {
    changes.status = { from: user.status, to: 'deactivated' };
    user.status = 'deactivated';
    changes.ended_sessions = await endUserSessions(scope, user.id, now, 'user_deactivated');
  }
  // Reset links sent before are for an address the account no longer has, or for an account an
  // admin has just barred: none of them works afterwards, reactivated or unlocked.
  if (newEmail || locks || deactivates) await retireResetLinks(scope.em, user.id, now);
  if (input.email_verified !== undefined && input.email_verified !== user.emailVerified) {
    user.emailVerified = input.email_verified;
    changes.email_verified = input.email_verified;
  }
  const metadata = input.metadata === undefined ? undefined : mergeMetadata(user.metadata, input.metadata);
  if (differs(metadata, user.metadata)) {
    user.metadata = metadata;
    changes.metadata = true;
  }
  if (Object.keys(changes).length > 0) {
    user.updatedAt = now;
    recordAudit(scope, { eventType: 'user.update', target: { type: 'user', id: user.id }, details: changes });
    emitEvent(scope, 'user.updated', { id: user.id, email: user.email, changes: Object.keys(changes) });
  }
  await scope.em.flush();
  return toUserView(user, now, (await withFactors(scope.em, [user.id])).has(user.id));
}

/** Deletes a user and, with them, their sessions, factors and role assignments. Never the last owner; an owner only by an owner. */
export async function deleteUser(scope: AuditScope, principal: Principal, id: string, now: Date) {
  const user = await findUser(scope.em, id);
  await guardOwner(scope.em, principal, user.id, now, { removes: true });
  await guardOutranked(scope.em, principal, user.id, now);
  await endUserSessions(scope, user.id, now, 'user_deleted');
  await denyOrphanedRequests(scope, { requesterId: user.id }, "The requester's account was deleted", now);
  scope.em.remove(user);
  recordAudit(scope, { eventType: 'user.delete', target: { type: 'user', id: user.id }, details: { email: user.email } });
  emitEvent(scope, 'user.deleted', { id: user.id, email: user.email });
  return { id: user.id, deleted: true as const };
}
