import type { Config } from '../src/config.ts';
import { newId } from '../src/core/ids.ts';
import { createLogger } from '../src/core/logger.ts';
import { hashPassword } from '../src/core/passwords.ts';
import { openDatabase } from '../src/db/database.ts';
import { User } from '../src/modules/users/user.entity.ts';
import { createWorkspace } from '../src/modules/workspaces/workspaces.service.ts';

export interface Seeded {
  apiKey: string;
  userId: string;
}

/** A workspace with `users` users, written straight to the database before the server starts. */
export async function seed(config: Config, users: number): Promise<Seeded> {
  const database = await openDatabase(config, createLogger('warn'), { migrate: true });
  try {
    const created = await database.orm.em.fork().transactional((em) =>
      createWorkspace(
        em,
        { name: 'Bench', owner: { email: `owner-${Date.now()}@bench.test`, password: 'bench password' } },
        {
          ip: null,
          userAgent: 'bench',
          requestId: null,
        },
      ),
    );
    const hash = await hashPassword('bench password');
    const now = new Date();
    for (let offset = 1; offset < users; offset += 1000) {
      const rows = Array.from({ length: Math.min(1000, users - offset) }, (_, i) => ({
        id: newId('usr'),
        workspaceId: created.workspace.id,
        email: `user${offset + i}@bench.test`,
        name: `Bench User ${offset + i}`,
        status: 'active' as const,
        passwordHash: hash,
        createdAt: now,
        updatedAt: now,
        lastSignInAt: null,
        failedLoginCount: 0,
        lockedUntil: null,
      }));
      await database.orm.em.fork().insertMany(User, rows);
    }
    // As autovacuum would after a bulk load; without it the planner guesses from an empty table.
    await database.orm.em.getConnection().execute('analyze users');
    return { apiKey: created.api_key, userId: created.owner.id };
  } finally {
    await database.close();
  }
}
