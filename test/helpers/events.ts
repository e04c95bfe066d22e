import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
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

/**
 * Test files of one worker share its database one after the other, and a file whose apps never tick a
 * dispatcher leaves its events unfanned. A round fans out the 200 oldest, so such a backlog would
 * hold a file's own events past the tick its assertions wait on: a file that ticks the dispatcher
 * calls this first, marking the earlier files' events fanned out (none of their workspaces is its own).
 */
export async function drainEarlierEvents(app: TestApp): Promise<void> {
  await app.deps.orm.em.fork().execute('update events set fanned_out_at = now() where fanned_out_at is null');
}

/** A webhook delivery's payload as the endpoint receives it. */
export interface Told {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** A local webhook endpoint that answers 200 and keeps every payload it receives, in arrival order. */
export interface WebhookReceiver {
  url: string;
  told: Told[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const told: Told[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      told.push(JSON.parse(body) as Told);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    told,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
