import type { EntityManager } from '@mikro-orm/postgresql';
import { isoOf } from '../../core/instant.ts';
import { offsetOf, type PageQuery } from '../../core/pagination.ts';

/** A member of a group or an organization as both lists show them: who, and since when. */
export interface MemberOf {
  user_id: string;
  email: string;
  name: string | null;
  added_at: string;
}

/** The membership tables, by what their rows make a user a member of. */
const MEMBERSHIPS = {
  group: { table: 'group_members', holder: 'group_id' },
  organization: { table: 'organization_members', holder: 'organization_id' },
} as const;

interface MemberRow {
  user_id: string;
  email: string;
  name: string | null;
  created_at: Date | string;
}

/** One page of a group's or an organization's members with their email and name, oldest membership first. */
export async function memberRowsOf(
  em: EntityManager,
  kind: keyof typeof MEMBERSHIPS,
  workspaceId: string,
  holderId: string,
  query: PageQuery,
): Promise<MemberOf[]> {
  const { table, holder } = MEMBERSHIPS[kind];
  const { limit, offset } = offsetOf(query);
  const rows = await em.execute<MemberRow[]>(
    `select m.user_id, u.email, u.name, m.created_at from ${table} m join users u on u.id = m.user_id
      where m.workspace_id = ? and m.${holder} = ? order by m.created_at, m.user_id limit ? offset ?`,
    [workspaceId, holderId, limit, offset],
  );
  return rows.map((row) => ({ user_id: row.user_id, email: row.email, name: row.name, added_at: isoOf(row.created_at) }));
}
