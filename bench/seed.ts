import { randomBytes } from 'node:crypto';
import type { Config } from '../src/config.ts';
import { newId } from '../src/core/ids.ts';
import { createLogger } from '../src/core/logger.ts';
import { hashPassword } from '../src/core/passwords.ts';
import { sha256 } from '../src/core/secrets.ts';
import { openDatabase } from '../src/db/database.ts';
import { RefreshToken, Session } from '../src/modules/auth/session.entity.ts';
import { issueApiKey } from '../src/modules/api-keys/api-keys.service.ts';
import { User } from '../src/modules/users/user.entity.ts';
import { Workspace } from '../src/modules/workspaces/workspace.entity.ts';
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

export interface SeededAudit {
  workspaceId: string;
  apiKey: string;
  events: number;
  /** An actor and a target that occur in the seeded events, and the newest event's time. */
  actorIds: string[];
  targetIds: string[];
  newest: Date;
}

const AUDIT_WORKSPACE = 'Bench audit';
/** Synthetic ids in the right shape (`usr_` and 26 characters of the alphabet), one per number. */
const syntheticUser = (n: number) => `usr_${String(n).padStart(26, '0')}`;
const AUDIT_ACTORS = 5_000;
const AUDIT_TARGETS = 20_000;

/**
 * A workspace holding `events` audit events, seeded by one set-based INSERT … SELECT over
 * generate_series (a million rows in well under a minute, indexes included). Half the events are
 * sign-ins, the rest spread over fifteen other types; one in ten fails; one in seven is made with an
 * API key; actors are 5,000 users, targets 20,000; one event every 2.5 seconds, the newest now (about
 * 29 days in all). A later run reuses the workspace when it already holds as many events, with a new
 * API key.
 */
export async function seedAudit(config: Config, events: number): Promise<SeededAudit> {
  const database = await openDatabase(config, createLogger('warn'), { migrate: true });
  try {
    const conn = database.orm.em.getConnection();
    const [existing] = await conn.execute<{ id: string; n: number; newest: Date }[]>(
      `select w.id, (select count(*)::int from audit_events a where a.workspace_id = w.id) as n,
              (select max(created_at) from audit_events a where a.workspace_id = w.id) as newest
         from workspaces w where w.name = ? order by w.created_at desc limit 1`,
      [AUDIT_WORKSPACE],
    );
    const em = database.orm.em.fork();
    let workspaceId: string;
    let newest: Date;
    if (existing && existing.n >= events) {
      workspaceId = existing.id;
      newest = new Date(existing.newest);
    } else {
      workspaceId = newId('wsp');
      em.persist(Object.assign(new Workspace(), { id: workspaceId, name: AUDIT_WORKSPACE, createdAt: new Date() }));
      await em.flush();
      newest = new Date();
      const types = [
        'auth.refresh',
        'auth.logout',
        'auth.password_change',
        'user.create',
        'user.update',
        'user.delete',
        'role.assign',
        'role.revoke',
        'group.create',
        'group.member_add',
        'invitation.create',
        'api_key.create',
        'mfa.factor_enroll',
        'vault.reveal',
        'access_request.create',
      ];
      await conn.execute(
        `insert into audit_events (id, workspace_id, event_type, outcome, actor_type, actor_id, target_type, target_id,
                                   ip, user_agent, request_id, details, created_at)
         select 'evt_' || lpad(to_hex(g), 10, '0') || substr(md5(g::text), 1, 16), ?,
                case when g % 2 = 0 then 'auth.login' else (?::text[])[1 + (g / 2) % ${types.length}] end,
                case when g % 10 = 0 then 'failure' else 'success' end,
                case when g % 7 = 0 then 'api_key' else 'user' end,
                case when g % 7 = 0 then 'key_bench' else 'usr_' || lpad((g % ${AUDIT_ACTORS})::text, 26, '0') end,
                'user', 'usr_' || lpad(((g::bigint * 7919) % ${AUDIT_TARGETS})::text, 26, '0'),
                '10.' || (g % 250) || '.' || (g % 199) || '.' || (g % 97), 'bench', null,
                jsonb_build_object('seq', g), ?::timestamptz - (? - g) * interval '2.5 seconds'
           from generate_series(1, ?) g`,
        [workspaceId, `{${types.join(',')}}`, newest.toISOString(), events, events],
      );
      // As autovacuum would after a bulk load: statistics for the planner, a visibility map for index-only counts.
      await conn.execute('vacuum analyze audit_events');
    }
    const { secret } = issueApiKey(em, workspaceId, 'bench audit');
    await em.flush();
    return {
      workspaceId,
      apiKey: secret,
      events,
      actorIds: Array.from({ length: 50 }, (_, i) => syntheticUser((i * 97) % AUDIT_ACTORS)),
      targetIds: Array.from({ length: 50 }, (_, i) => syntheticUser((i * 389) % AUDIT_TARGETS)),
      newest,
    };
  } finally {
    await database.close();
  }
}
