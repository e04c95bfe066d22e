import type { EntityManager } from '@mikro-orm/postgresql';
import type { AuditTarget } from './audit.ts';
import { TEMPLATE_KEYS } from '../modules/email/templates.ts';
import { SOCIAL_PROVIDERS } from '../modules/sso/social-provider.entity.ts';

/**
 * How the resource a REST path names by its first parameter is found, to name it as the target of a
 * refused call's audit row: the target type its successes record (`user` for `/users/{id}`), and
 * either a statement that answers the resource's id in the caller's workspace (`?` the workspace, `?`
 * the value sent), or the names of a fixed vocabulary every workspace has (a template key, a sign-in
 * provider), recorded when the value sent is one of them.
 */
type TargetLookup = { type: string; sql: string } | { type: string; names: readonly string[] };

const own = (table: string, column = 'id') => `select id from ${table} where workspace_id = ? and ${column} = ?`;

/** Keyed by the path's collection: what comes between `/api/v1/` and its first `{parameter}`. */
const LOOKUPS = {
  users: { type: 'user', sql: own('users') },
  roles: { type: 'role', sql: 'select id from roles where workspace_id = ? and ? in (id, key)' },
  groups: { type: 'group', sql: own('groups') },
  invitations: { type: 'invitation', sql: own('invitations') },
  organizations: { type: 'organization', sql: own('organizations') },
  'idp-attributes': { type: 'idp_attribute', sql: 'select key as id from idp_attributes where workspace_id = ? and key = ?' },
  'auth/oauth/providers': { type: 'social_provider', names: SOCIAL_PROVIDERS },
  applications: { type: 'application', sql: own('applications') },
  'vault/objects': { type: 'vault_object', sql: own('vault_objects') },
  'iga/requests': { type: 'access_request', sql: own('access_requests') },
  'iga/reviews': { type: 'access_review', sql: own('access_reviews') },
  webhooks: { type: 'webhook', sql: own('webhook_endpoints') },
  'webhooks/deliveries': { type: 'webhook_delivery', sql: own('webhook_deliveries') },
  domains: { type: 'domain', sql: own('custom_domains') },
  'email-templates': { type: 'email_template', names: TEMPLATE_KEYS },
  actions: { type: 'action', sql: own('actions') },
  'api-keys': { type: 'api_key', sql: own('api_keys') },
  'mfa/factors': { type: 'factor', sql: own('mfa_factors') },
  'auth/sessions': { type: 'session', sql: own('sessions') },
} satisfies Record<string, TargetLookup>;

/** A collection whose resources a refusal can name. */
export type TargetCollection = keyof typeof LOOKUPS;

/**
 * Where a call's input names its target: a collection, and the input members (the canonical one,
 * then its aliases) that hold the resource's id or key.
 */
export interface TargetSource {
  collection: string;
  members: readonly string[];
}

const PATH = /^\/api\/v1\/([a-z/-]+?)\/\{(\w+)\}/;

/** The collection and parameter of a REST path that names a resource (`/api/v1/users/{id}` → `users`, `id`). */
export function namedResource(template: string | undefined): TargetSource | undefined {
  const match = template ? PATH.exec(template) : null;
  return match?.[1] && match[2] ? { collection: match[1], members: [match[2]] } : undefined;
}

/** Whether refusals of calls on this path can name their target (a test keeps every such path listed). */
export function knowsTargetsOf(template: string): boolean {
  const named = namedResource(template);
  return named === undefined || named.collection in LOOKUPS;
}

/** What an id or key can hold: anything else (longer, other characters) names nothing, and is not looked up. */
const ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/**
 * The target of a refused call, from the id its REST path holds or, for a call whose path names none
 * (`/roles/assign`), the body member its successes name (`source`, from meta `targetInBody`): on every
 * door, as tRPC and GraphQL send the same input member. Only a resource of the caller's workspace is
 * named: an id of another workspace, an unknown or a malformed one leaves the row without a target, as
 * it always did, so the log holds no other workspace's id and tells nothing of what exists elsewhere.
 * A name of a fixed vocabulary (an email template's key, a sign-in provider) is recorded when it is
 * one of them.
 */
export async function refusedTarget(
  em: EntityManager,
  workspaceId: string,
  source: TargetSource,
  rawInput: unknown,
): Promise<AuditTarget | undefined> {
  const lookup: TargetLookup | undefined = (LOOKUPS as Record<string, TargetLookup>)[source.collection];
  if (!lookup || typeof rawInput !== 'object' || rawInput === null) return undefined;
  const input = rawInput as Record<string, unknown>;
  const value = source.members.map((member) => input[member]).find((held) => held !== undefined && held !== null);
  if (typeof value !== 'string' || !ID.test(value)) return undefined;
  if ('names' in lookup) return lookup.names.includes(value) ? { type: lookup.type, id: value } : undefined;
  const [row] = await em.getConnection().execute<{ id: string }[]>(lookup.sql, [workspaceId, value]);
  return row ? { type: lookup.type, id: row.id } : undefined;
}
