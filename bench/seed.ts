import { randomBytes } from 'node:crypto';
import type { Config } from '../src/config.ts';
import { newId } from '../src/core/ids.ts';
import { createLogger } from '../src/core/logger.ts';
import { hashPassword } from '../src/core/passwords.ts';
import { sha256 } from '../src/core/secrets.ts';
import { openDatabase } from '../src/db/database.ts';
import { RefreshToken, Session } from '../src/modules/auth/session.entity.ts';
import { User } from '../src/modules/users/user.entity.ts';
import { createWorkspace } from '../src/modules/workspaces/workspaces.service.ts';

export const BENCH_PASSWORD = 'bench password';

export interface Seeded {
  workspaceId: string;
  apiKey: string;
  userId: string;
  ownerEmail: string;
  emails: string[];
  refreshTokens: string[];
}

/**
 * A workspace with `users` users (all with BENCH_PASSWORD) and `refreshTokens` unused refresh tokens
 * spread over many sessions, written straight to the database before the server starts.
 */
export async function seed(config: Config, users: number, refreshTokens: number): Promise<Seeded> {
  const database = await openDatabase(config, createLogger('warn'), { migrate: true });
  try {
    const ownerEmail = `owner-${Date.now()}@bench.test`;
    const created = await database.orm.em
      .fork()
      .transactional((em) =>
        createWorkspace(
          em,
          { name: 'Bench', owner: { email: ownerEmail, password: BENCH_PASSWORD } },
          { ip: null, userAgent: 'bench', requestId: null },
        ),
      );
    const workspaceId = created.workspace.id;
    const hash = await hashPassword(BENCH_PASSWORD);
    const now = new Date();
    const emails: string[] = [];
    const userIds: string[] = [];
    for (let offset = 1; offset < users; offset += 1000) {
      const rows = Array.from({ length: Math.min(1000, users - offset) }, (_, i) => {
        const email = `user${offset + i}@bench.test`;
        emails.push(email);
        const id = newId('usr');
        userIds.push(id);
        return {
          id,
          workspaceId,
          email,
          name: `Bench User ${offset + i}`,
          status: 'active' as const,
          passwordHash: hash,
          createdAt: now,
          updatedAt: now,
          lastSignInAt: null,
          failedLoginCount: 0,
          lockedUntil: null,
          emailVerified: false,
          metadata: {},
        };
      });
      await database.orm.em.fork().insertMany(User, rows);
    }

    const expiresAt = new Date(now.getTime() + 24 * 3600 * 1000);
    const sessionIds = userIds.slice(0, 1000).map(() => newId('ses'));
    await database.orm.em.fork().insertMany(
      Session,
      sessionIds.map((id, i) => ({
        id,
        workspaceId,
        userId: userIds[i] as string,
        createdAt: now,
        lastRefreshedAt: null,
        expiresAt,
        endedAt: null,
        endReason: null,
        ip: null,
        userAgent: 'bench',
      })),
    );
    const secrets: string[] = [];
    for (let offset = 0; offset < refreshTokens; offset += 2000) {
      const rows = Array.from({ length: Math.min(2000, refreshTokens - offset) }, (_, i) => {
        const secret = `rt_${randomBytes(32).toString('base64url')}`;
        secrets.push(secret);
        return {
          id: newId('rtk'),
          workspaceId,
          sessionId: sessionIds[(offset + i) % sessionIds.length] as string,
          tokenHash: sha256(secret),
          createdAt: now,
          expiresAt,
          usedAt: null,
        };
      });
      await database.orm.em.fork().insertMany(RefreshToken, rows);
    }
    // As autovacuum would after a bulk load: fresh statistics and a visibility map for index-only scans.
    await database.orm.em.getConnection().execute('vacuum analyze');
    return { workspaceId, apiKey: created.api_key, userId: created.owner.id, ownerEmail, emails, refreshTokens: secrets };
  } finally {
    await database.close();
  }
}
