import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoOf } from '../../core/instant.ts';
import { roleOutput } from '../roles/roles.schema.ts';

/** What the admin reports show beside each user, fetched for a whole page of users at once. */
export const userRelationsInput = z.object({ ids: z.array(z.string().max(100)).min(1).max(100) });

export const userRelationsOutput = z.array(
  z.object({
    user_id: z.string(),
    roles: z.array(z.object({ role: roleOutput, expires_at: z.string().nullable() })),
    mfa: z.object({ verified: z.number().int(), kinds: z.array(z.literal('totp')) }),
  }),
);
export type UserRelationsView = z.infer<typeof userRelationsOutput>[number];

interface RoleRow {
  user_id: string;
  id: string;
  key: string;
  name: string;
  description: string | null;
  builtin: boolean;
  permissions: string[];
  created_at: Date | string;
  expires_at: Date | string | null;
}

/**
 * Live role assignments and verified factors of up to 100 users of one workspace: two statements
 * whatever the number of users (the GraphQL dataloader's batch). Their groups are the groups module's
 * to show (`groups.ofUsers`, `groups:read`).
 * Ids of other workspaces or of no user come back with empty relations, like an unknown user would.
 */
export async function userRelations(em: EntityManager, workspaceId: string, userIds: string[], now: Date): Promise<UserRelationsView[]> {
  const ids = [...new Set(userIds)];
  const roles = await em.execute<RoleRow[]>(
    `select ra.user_id, r.id, r.key, r.name, r.description, r.builtin, r.permissions, r.created_at, ra.expires_at
       from role_assignments ra join roles r on r.id = ra.role_id
      where ra.workspace_id = ? and ra.user_id in (?) and (ra.expires_at is null or ra.expires_at > ?)
      order by r.builtin desc, r.created_at, r.id`,
    [workspaceId, ids, now],
  );
  const factors = await em.execute<{ user_id: string; kind: 'totp'; verified: number }[]>(
    `select user_id, kind, count(*)::int as verified from mfa_factors
      where workspace_id = ? and user_id in (?) and status = 'Verified' group by user_id, kind`,
    [workspaceId, ids],
  );
  return ids.map((userId) => {
    const kinds = factors.filter((f) => f.user_id === userId);
    return {
      user_id: userId,
      roles: roles
        .filter((r) => r.user_id === userId)
        .map((r) => ({
          role: {
            id: r.id,
            key: r.key,
            name: r.name,
            description: r.description,
            builtin: r.builtin,
            permissions: r.permissions,
            created_at: isoOf(r.created_at),
          },
          expires_at: r.expires_at ? isoOf(r.expires_at) : null,
        })),
      mfa: { verified: kinds.reduce((sum, f) => sum + f.verified, 0), kinds: kinds.map((f) => f.kind) },
    };
  });
}
