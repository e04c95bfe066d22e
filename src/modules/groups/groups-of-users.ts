import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';

/** Up to 100 users of one workspace, by id (a page of the users list). */
export const groupsOfUsersInput = z.object({ ids: z.array(z.string().max(100)).min(1).max(100) });

export const groupsOfUsersOutput = z.array(
  z.object({
    user_id: z.string(),
    groups: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
);
export type GroupsOfUserView = z.infer<typeof groupsOfUsersOutput>[number];

/**
 * The groups each of up to 100 users of one workspace is a member of, by name: one statement whatever
 * the number of users (the GraphQL dataloader's batch). Reading them is reading groups (`groups:read`),
 * whoever may read the users. Ids of other workspaces or of no user come back with no groups.
 */
export async function groupsOfUsers(em: EntityManager, workspaceId: string, userIds: string[]): Promise<GroupsOfUserView[]> {
  const ids = [...new Set(userIds)];
  const rows = await em.execute<{ user_id: string; id: string; name: string }[]>(
    `select gm.user_id, g.id, g.name from group_members gm join groups g on g.id = gm.group_id
      where gm.workspace_id = ? and gm.user_id in (?) order by g.name, g.id`,
    [workspaceId, ids],
  );
  return ids.map((userId) => ({
    user_id: userId,
    groups: rows.filter((row) => row.user_id === userId).map((row) => ({ id: row.id, name: row.name })),
  }));
}
