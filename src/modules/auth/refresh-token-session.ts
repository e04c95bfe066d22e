import type { EntityManager } from '@mikro-orm/postgresql';
import { sha256 } from '../../core/secrets.ts';

/** The live session of `userId` a refresh token (used or not) belongs to; null for anyone else's or none. */
export async function liveSessionOfRefreshToken(em: EntityManager, refreshToken: string, userId: string): Promise<string | null> {
  const [row] = await em.execute<{ session_id: string }[]>(
    `select t.session_id from refresh_tokens t join sessions s on s.id = t.session_id
      where t.token_hash = ? and s.user_id = ? and s.ended_at is null`,
    [sha256(refreshToken), userId],
  );
  return row?.session_id ?? null;
}
