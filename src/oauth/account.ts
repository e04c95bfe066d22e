import type { MikroORM } from '@mikro-orm/postgresql';
import type { Account, FindAccount } from 'oidc-provider';
import { runStatement, type Statement } from '../core/sql.ts';
import { isId } from '../core/ids.ts';
import { workspaceOf } from './clients.ts';

const USER: Statement = {
  name: 'oidc_account',
  text: 'select id, workspace_id, email, email_verified, name, status, locked_until, updated_at from users where id = $1',
};

interface UserRow {
  id: string;
  workspace_id: string;
  email: string;
  email_verified: boolean;
  name: string | null;
  status: string;
  locked_until: Date | null;
  updated_at: Date;
}

/**
 * An account the authorization server must not act for: deactivated, or locked by an admin (no end
 * time). A lockout after failed passwords is not one: it refuses new sign-ins only, and someone
 * guessing passwords must not end the real user's sessions (docs/decisions.md).
 */
function barred(user: UserRow): boolean {
  return user.status === 'deactivated' || (user.status === 'locked' && user.locked_until === null);
}

/**
 * The claims each scope releases (OpenID Connect Core 5.4). Every id_token also says when and how
 * the user signed in (`auth_time`, `amr`: pwd, otp, mfa).
 */
export const CLAIMS = {
  acr: null,
  amr: null,
  auth_time: null,
  iss: null,
  openid: ['sub', 'auth_time', 'amr'],
  email: ['email', 'email_verified'],
  profile: ['name', 'updated_at'],
};

/**
 * The user behind a `sub`, as oidc-provider asks for it on every authorization, refresh and userinfo
 * call. A deactivated user, one an admin locked, a deleted one, or one of another workspace than the
 * client's is no account: sign-in is asked again, refresh, userinfo and introspection fail (the lock
 * or deactivation also ends the grants; this refuses a grant that raced it).
 */
export function accountFinder(orm: MikroORM): FindAccount {
  return async (ctx, sub): Promise<Account | undefined> => {
    if (!isId('usr', sub)) return undefined;
    const [user] = await runStatement<UserRow>(orm, USER, [sub]);
    if (!user || barred(user)) return undefined;
    const clientWorkspace = workspaceOf(ctx.oidc.client);
    if (clientWorkspace && clientWorkspace !== user.workspace_id) return undefined;
    return {
      accountId: user.id,
      claims: () => ({
        sub: user.id,
        email: user.email,
        email_verified: user.email_verified,
        name: user.name ?? undefined,
        updated_at: Math.floor(new Date(user.updated_at).getTime() / 1000),
      }),
    };
  };
}
