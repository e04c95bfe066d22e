import { isoOf } from '../../core/instant.ts';
import type { UserStatus } from './user.entity.ts';
import type { UserView } from './users.schema.ts';

/*
 * A user as prepared statements read it (core/sql.ts). Kept apart from users.service so the auth
 * statements can use it without importing the service.
 */

/** The columns `userRowToView` reads, for statements that answer a user (`users` must be the table's name or alias). */
export const USER_COLUMNS = `users.id, users.email, users.name, users.status, users.locked_until, users.created_at, users.updated_at,
  users.last_sign_in_at, users.email_verified, users.metadata,
  exists (select 1 from mfa_factors f where f.user_id = users.id and f.status = 'Verified') as mfa_enabled`;

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  status: UserStatus;
  locked_until: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
  last_sign_in_at: Date | string | null;
  email_verified: boolean;
  mfa_enabled: boolean;
  metadata: Record<string, unknown>;
}

/**
 * The status a user has at `now`: a lock after failed sign-ins (with an end) is over at `locked_until`,
 * though the row says `locked` until the next sign-in attempt writes it back; an admin's lock (no end)
 * lasts until it is lifted.
 */
export function statusAt(status: UserStatus, lockedUntil: Date | string | null, now: Date): UserStatus {
  return status === 'locked' && lockedUntil !== null && new Date(lockedUntil) <= now ? 'active' : status;
}

/** `statusAt` in SQL, for filters: `users` as in USER_COLUMNS, `now` the parameter holding the time. */
export function statusAtSql(now: string): string {
  return `(case when users.status = 'locked' and users.locked_until <= ${now} then 'active' else users.status end)`;
}

/** A users row read by a prepared statement, as the API shows it at `now`. */
export function userRowToView(row: UserRow, now: Date): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    status: statusAt(row.status, row.locked_until, now),
    created_at: isoOf(row.created_at),
    updated_at: isoOf(row.updated_at),
    last_sign_in_at: row.last_sign_in_at === null ? null : isoOf(row.last_sign_in_at),
    email_verified: row.email_verified,
    mfa_enabled: row.mfa_enabled,
    metadata: row.metadata,
  };
}
