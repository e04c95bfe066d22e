import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

/**
 * Named prepared statements on the ORM's own pool, for the few statements that run on every request
 * (credential checks, token rotation). PostgreSQL plans each once per connection instead of on every
 * call, and no query builder runs: measured 4–8× less CPU than an ORM find (docs/decisions.md).
 * Everything else goes through the ORM.
 */
export interface Statement {
  /**
   * Unique per distinct text: PostgreSQL caches the plan under this name. Without one the statement
   * is planned for its values on every run: for the few whose best plan depends on the values.
   */
  name?: string;
  /** `$1`-style placeholders. */
  text: string;
}

interface PgClient {
  query<R>(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
}

/**
 * PGlite (the embedded database) is one backend shared by every connection ever made to it, so a
 * named statement outlives the connection that prepared it and a reconnect could not prepare it
 * again. There, statements run unnamed.
 */
const unnamed = new WeakSet<object>();

export async function detectStatementSupport(orm: MikroORM): Promise<void> {
  const [row] = await orm.em.getConnection().execute<{ version: string }[]>('select version() as version');
  if (/pglite|emscripten/i.test(row?.version ?? '')) unnamed.add(orm.em.getConnection().getKnex().client);
}

function config(client: object, statement: Statement, values: unknown[]) {
  return unnamed.has(client) || !statement.name ? { text: statement.text, values } : { name: statement.name, text: statement.text, values };
}

function knexClient(orm: MikroORM): KnexClient {
  return (orm.em.getConnection().getKnex() as unknown as { client: KnexClient }).client;
}

async function runPooled<R>(client: KnexClient, statement: Statement, values: unknown[]): Promise<R[]> {
  const connection = await client.acquireConnection();
  try {
    const result = await connection.query<R>(config(client, statement, values));
    return result.rows;
  } finally {
    await client.releaseConnection(connection);
  }
}

/** Runs a prepared statement on a pooled connection (never inside a request's transaction). */
export function runStatement<R>(orm: MikroORM, statement: Statement, values: unknown[]): Promise<R[]> {
  return runPooled(knexClient(orm), statement, values);
}

/**
 * Runs a prepared statement on the connection of the transaction `em` is in; when `em` is in none, on
 * a pooled connection of its own (the statement is then atomic on its own, like any single statement).
 */
export async function runStatementIn<R>(em: EntityManager, statement: Statement, values: unknown[]): Promise<R[]> {
  const client = em.getConnection().getKnex().client as unknown as KnexClient;
  const trx = em.getTransactionContext() as { client?: { acquireConnection(): Promise<PgClient> } } | undefined;
  if (!trx?.client) return runPooled(client, statement, values);
  const connection = await trx.client.acquireConnection();
  const result = await connection.query<R>(config(client, statement, values));
  return result.rows;
}
