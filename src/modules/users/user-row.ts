import type { UserStatus } from './user.entity.ts';
import type { UserView } from './users.schema.ts';

/*
 * A user as prepared statements read it (core/sql.ts). Kept apart from users.service so the auth
 * statements can use it without importing the service.
 */

/** The columns `userRowToView` reads, for statements that answer a user (`users` must be the table's name or alias). */
export const USER_COLUMNS = `users.id, users.email, users.name, users.status, users.created_at, users.updated_at, users.last_sign_in_at,
  users.email_verified, users.metadata,
  exists (select 1 from mfa_factors f where f.user_id = users.id and f.status = 'Verified') as mfa_enabled`;

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  status: UserStatus;
  created_at: Date | string;
  updated_at: Date | string;
  last_sign_in_at: Date | string | null;
  email_verified: boolean;
  mfa_enabled: boolean;
  metadata: Record<string, unknown>;
}

/** The ORM's driver hands timestamps back as strings; either way, ISO 8601 UTC out. */
function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

/** A users row read by a prepared statement, as the API shows it. */
export function userRowToView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    status: row.status,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    last_sign_in_at: row.last_sign_in_at === null ? null : iso(row.last_sign_in_at),
    email_verified: row.email_verified,
    mfa_enabled: row.mfa_enabled,
    metadata: row.metadata,
  };
}
