import type { TestApp } from './app.ts';

/**
 * The payloads of a workspace's outbox events of one type, oldest first: what a webhook subscriber is
 * told. `userId` keeps those whose payload names that user.
 */
export async function toldEvents(app: TestApp, workspaceId: string, type: string, userId?: string): Promise<Record<string, unknown>[]> {
  const rows = await app.deps.orm.em
    .fork()
    .getConnection()
    .execute<{ payload: Record<string, unknown> }[]>(
      `select payload from events where workspace_id = ? and type = ? and (?::text is null or payload->>'user_id' = ?)
        order by created_at, id`,
      [workspaceId, type, userId ?? null, userId ?? null],
    );
  return rows.map((row) => row.payload);
}
