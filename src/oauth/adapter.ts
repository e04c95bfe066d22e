import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import Provider, { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import { runStatement, type Statement } from '../core/sql.ts';
import { isId, newId } from '../core/ids.ts';
import { DAY } from '../core/clock.ts';
import { sweepOf } from '../core/sweeper.ts';
import { isStorableText } from '../core/storable-text.ts';
import type { SigningKeys } from '../modules/auth/signing-keys.ts';
import { clientMetadata, type ApplicationRow } from './clients.ts';

/*
 * oidc-provider's storage in PostgreSQL: one row per artifact (code, token, grant, session,
 * interaction), keyed by model and id, with the columns its lookups need. Nothing lives in process
 * memory, so any instance can finish what another began. Every statement is prepared (core/sql.ts):
 * the token endpoint runs them on every call.
 */

const UPSERT: Statement = {
  name: 'oidc_upsert',
  text: `insert into oidc_payloads (kind, id, payload, grant_id, user_code, uid, client_id, expires_at, account_id)
         values ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9)
         on conflict (kind, id) do update
           set payload = excluded.payload, grant_id = excluded.grant_id, user_code = excluded.user_code,
               uid = excluded.uid, client_id = excluded.client_id, expires_at = excluded.expires_at,
               account_id = excluded.account_id`,
};

const FIND: Statement = {
  name: 'oidc_find',
  text: `select payload, consumed_at from oidc_payloads
          where kind = $1 and id = $2 and (expires_at is null or expires_at > $3)`,
};

const FIND_BY_UID: Statement = {
  name: 'oidc_find_by_uid',
  text: `select payload, consumed_at from oidc_payloads
          where kind = $1 and uid = $2 and (expires_at is null or expires_at > $3)`,
};

const FIND_BY_USER_CODE: Statement = {
  name: 'oidc_find_by_user_code',
  text: `select payload, consumed_at from oidc_payloads
          where kind = $1 and user_code = $2 and (expires_at is null or expires_at > $3)`,
};

/**
 * Consumes a single-use artifact (authorization code, refresh token) with one conditional update, so
 * of two concurrent uses exactly one wins; answers the artifact's grant either way.
 */
const CONSUME: Statement = {
  name: 'oidc_consume',
  text: `with target as (
           select grant_id from oidc_payloads where kind = $1 and id = $2
         ), consumed as (
           update oidc_payloads set consumed_at = $3 where kind = $1 and id = $2 and consumed_at is null returning id
         )
         select (select grant_id from target) as grant_id, (select count(*) from consumed)::int as consumed`,
};

const DESTROY: Statement = { name: 'oidc_destroy', text: 'delete from oidc_payloads where kind = $1 and id = $2' };

const REVOKE_BY_GRANT: Statement = {
  name: 'oidc_revoke_by_grant',
  text: 'delete from oidc_payloads where kind = $1 and grant_id = $2',
};

/**
 * `session.revoked` for each grant a statement's `gone` CTE deleted (an application's session of a
 * user, ended), in that statement: the event commits exactly when the grant goes. The payload is
 * sessions.service.ts `tellSessionEnded`'s, with no `ses_` id and the application's `client_id`.
 */
const TELL_GRANTS_ENDED = `insert into events (id, workspace_id, type, payload, created_at)
         select $3, u.workspace_id, 'session.revoked',
                jsonb_build_object('session_id', null, 'user_id', u.id, 'client_id', gone.client_id, 'reason', $4::text), $5
           from gone join users u on u.id = gone.account_id
          where gone.kind = 'Grant'`;

/** Every artifact of a grant, whatever its kind: what a replayed code or refresh token costs. */
const REVOKE_GRANT_EVERYWHERE: Statement = {
  name: 'oidc_revoke_grant_everywhere',
  text: `with gone as (
           delete from oidc_payloads where grant_id = $1 or (kind = $2 and id = $1) returning kind, account_id, client_id
         )
         ${TELL_GRANTS_ENDED}`,
};

/** A grant destroyed by the authorization server (logout, revocation, a replay it caught), told as above. */
const END_GRANT: Statement = {
  name: 'oidc_end_grant',
  text: `with gone as (
           delete from oidc_payloads where kind = $2 and id = $1 returning kind, account_id, client_id
         )
         ${TELL_GRANTS_ENDED}`,
};

/** A replayed authorization code or refresh token, by the kind replayed. */
function reuseReason(kind: string): string {
  return kind === 'AuthorizationCode' ? 'code_reuse' : 'refresh_token_reuse';
}

/**
 * Why the authorization server ends a grant, by the endpoint that ends it: RP-initiated logout, the
 * application revoking its refresh token (RFC 7009), or a replayed code or refresh token at the
 * token endpoint.
 */
function grantEndReason(): string {
  switch (Provider.ctx?.oidc.route) {
    case 'end_session':
    case 'end_session_confirm':
      return 'logout';
    case 'token':
      return reuseReason(Provider.ctx?.oidc.params?.grant_type === 'authorization_code' ? 'AuthorizationCode' : 'RefreshToken');
    default:
      return 'revoked';
  }
}

/**
 * An application as a client, with how many signing keys are revoked: oidc-provider finds the client
 * before it signs an id_token (the token endpoint authenticates it first) or checks an `id_token_hint`
 * (authorization, end-session), so an instance whose loaded keys differ reloads them first, and no
 * instance signs with a key revoked elsewhere (the CLI), without a query of its own.
 */
const CLIENT: Statement = {
  name: 'oidc_client',
  text: `select id, workspace_id, name, type, redirect_uris, post_logout_redirect_uris, secret_hash,
                (select count(*)::int from signing_keys where revoked_at is not null) as revoked_keys
           from applications where id = $1`,
};

interface ClientRow extends ApplicationRow {
  revoked_keys: number;
}

interface PayloadRow {
  payload: AdapterPayload;
  consumed_at: Date | null;
}

function toPayload(row: PayloadRow | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  return row.consumed_at ? { ...row.payload, consumed: Math.floor(new Date(row.consumed_at).getTime() / 1000) } : row.payload;
}

function now(): string {
  return new Date().toISOString();
}

/**
 * Reads and deletes by a presented id (a token, a code, a client id: anything a client sends). An id
 * holding text the database cannot hold (NUL, a lone surrogate) names nothing: not found, no query.
 */
export class PostgresAdapter implements Adapter {
  constructor(
    private readonly orm: MikroORM,
    private readonly keys: Pick<SigningKeys, 'catchUpWithRevocations'>,
    private readonly kind: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const expiresAt = expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null;
    const clientId = payload.clientId ?? (typeof payload.params?.client_id === 'string' ? payload.params.client_id : null);
    await runStatement(this.orm, UPSERT, [
      this.kind,
      id,
      JSON.stringify(payload),
      payload.grantId ?? null,
      payload.userCode ?? null,
      payload.uid ?? null,
      clientId,
      expiresAt,
      payload.accountId ?? null,
    ]);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(id)) return undefined;
    if (this.kind === 'Client') return this.findClient(id);
    const [row] = await runStatement<PayloadRow>(this.orm, FIND, [this.kind, id, now()]);
    return toPayload(row);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(uid)) return undefined;
    const [row] = await runStatement<PayloadRow>(this.orm, FIND_BY_UID, [this.kind, uid, now()]);
    return toPayload(row);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!isStorableText(userCode)) return undefined;
    const [row] = await runStatement<PayloadRow>(this.orm, FIND_BY_USER_CODE, [this.kind, userCode, now()]);
    return toPayload(row);
  }

  /**
   * oidc-provider checks `consumed` before it consumes; two requests racing with the same code both
   * pass that check. Here only one update wins: the loser is a replay, so it revokes the whole grant
   * (every token issued from it) and fails with `invalid_grant`.
   */
  async consume(id: string): Promise<void> {
    const [row] = await runStatement<{ grant_id: string | null; consumed: number }>(this.orm, CONSUME, [this.kind, id, now()]);
    if (row && row.consumed > 0) return;
    if (row?.grant_id) {
      await runStatement(this.orm, REVOKE_GRANT_EVERYWHERE, [row.grant_id, 'Grant', newId('msg'), reuseReason(this.kind), now()]);
    }
    throw new errors.InvalidGrant('grant already consumed');
  }

  async destroy(id: string): Promise<void> {
    if (!isStorableText(id)) return;
    if (this.kind === 'Grant') await runStatement(this.orm, END_GRANT, [id, this.kind, newId('msg'), grantEndReason(), now()]);
    else await runStatement(this.orm, DESTROY, [this.kind, id]);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await runStatement(this.orm, REVOKE_BY_GRANT, [this.kind, grantId]);
  }

  /**
   * Clients are the applications table: read on every use, so a rotated secret or a deletion acts at
   * once; the same statement tells a key revoked elsewhere before anything is signed or checked.
   */
  private async findClient(id: string): Promise<AdapterPayload | undefined> {
    if (!isId('app', id)) return undefined;
    const [row] = await runStatement<ClientRow>(this.orm, CLIENT, [id]);
    if (!row) return undefined;
    await this.keys.catchUpWithRevocations(row.revoked_keys);
    return clientMetadata(row);
  }
}

/**
 * Ends a user's OAuth sign-ins: every grant, token, code and hosted sign-in session of the account, in
 * the caller's transaction. Refresh and introspection then find nothing, userinfo refuses, and the
 * hosted page asks for the password again. Answers the grants that ended (an application's session
 * each), for the caller to tell subscribers why.
 */
export async function endOAuthSessionsOf(em: EntityManager, userId: string): Promise<{ clientId: string | null }[]> {
  const ended = await em.execute<{ kind: string; client_id: string | null }[]>(
    'delete from oidc_payloads where account_id = ? returning kind, client_id',
    [userId],
  );
  return ended.filter((row) => row.kind === 'Grant').map((row) => ({ clientId: row.client_id }));
}

/** Artifacts (codes, tokens, grants, sessions, interactions) a day after they expired, through oidc_payloads_expires_at_index. */
export const oidcSweep = sweepOf('oidc_payloads', 'expires_at < $1', DAY, { doneAt: 'expires_at' });
