import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { lockUntilCommit } from '../../core/advisory-locks.ts';
import { AppError } from '../../core/errors.ts';
import { newId } from '../../core/ids.ts';
import { pageOf, pageParams, toPage, type PageQuery } from '../../core/pagination.ts';
import { IdpAttribute } from './idp-attribute.entity.ts';
import { takenConflict } from '../../core/conflicts.ts';
import { labelInput } from '../../core/labels.ts';
import { differs } from '../../core/patch.ts';

const SAML_CLAIMS = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims';

/** Built-in attributes, the names identity providers commonly send them under, and whether they start on. */
export const BUILTIN_ATTRIBUTES: Record<string, { name: string; aliases: string[]; enabled: boolean }> = {
  email: { name: 'Email', aliases: ['email', 'mail', `${SAML_CLAIMS}/emailaddress`, 'urn:oid:0.9.2342.19200300.100.1.3'], enabled: true },
  first_name: {
    name: 'First name',
    aliases: ['given_name', 'first_name', 'firstName', 'givenName', `${SAML_CLAIMS}/givenname`, 'urn:oid:2.5.4.42'],
    enabled: true,
  },
  last_name: {
    name: 'Last name',
    aliases: ['family_name', 'last_name', 'lastName', 'surname', 'sn', `${SAML_CLAIMS}/surname`, 'urn:oid:2.5.4.4'],
    enabled: true,
  },
  name: { name: 'Display name', aliases: ['name', 'displayName', `${SAML_CLAIMS}/name`], enabled: true },
  groups: {
    name: 'Groups',
    aliases: ['groups', 'memberOf', 'http://schemas.microsoft.com/ws/2008/06/identity/claims/groups'],
    enabled: true,
  },
  phone_number: { name: 'Phone number', aliases: ['phone_number', 'phone', 'telephoneNumber'], enabled: false },
  locale: { name: 'Locale', aliases: ['locale'], enabled: false },
  picture: { name: 'Picture', aliases: ['picture', 'avatar_url'], enabled: false },
};

/** The built-in named `key`, if any (own keys only: `toString` or `constructor` is a key like any other). */
function builtinOf(key: string): (typeof BUILTIN_ATTRIBUTES)[string] | undefined {
  return Object.hasOwn(BUILTIN_ATTRIBUTES, key) ? BUILTIN_ATTRIBUTES[key] : undefined;
}

export const idpAttributeOutput = z
  .object({ key: z.string(), name: z.string(), builtin: z.boolean(), enabled: z.boolean(), claims: z.array(z.string()) })
  .meta({ id: 'IdpAttribute' });
export type IdpAttributeView = z.infer<typeof idpAttributeOutput>;
export const idpAttributePage = pageOf(idpAttributeOutput);
export const listIdpAttributesInput = z.object({ ...pageParams }).prefault({});

/** A custom attribute: `key` (as claims are spelled: `department`, `employeeId`), its name (the key unless given). */
export const createIdpAttributeInput = z.strictObject({
  key: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_-]{0,49}$/, 'must be 1–50 letters, digits, _ or -, starting with a letter')
    .describe('Kept as spelled; unique whatever its case, built-in keys included (`Email` is taken by `email`: 409)'),
  name: labelInput(100).optional(),
  claim: z.string().trim().min(1).max(300).optional(),
  enabled: z.boolean().default(true),
});
/** Switch it on or off, rename it, or both; neither changes nothing and answers the attribute (core/patch.ts). */
export const updateIdpAttributeInput = z.strictObject({
  key: z.string().max(50),
  enabled: z.boolean().optional(),
  name: labelInput(100).optional(),
});

type AttributeState = Pick<IdpAttribute, 'key' | 'name' | 'builtin' | 'enabled' | 'claim'>;

/** A built-in attribute as it is until its first change (no row stored yet). */
function builtinDefaults(key: string, builtin: (typeof BUILTIN_ATTRIBUTES)[string]): AttributeState {
  return { key, name: builtin.name, builtin: true, enabled: builtin.enabled, claim: null };
}

/** An attribute as the API shows it: a built-in matches its aliases, a custom one its claim. */
function attributeView(row: AttributeState): IdpAttributeView {
  const builtin = row.builtin ? builtinOf(row.key) : undefined;
  return {
    key: row.key,
    name: row.name,
    builtin: row.builtin,
    enabled: row.enabled,
    claims: builtin ? builtin.aliases : [row.claim ?? row.key],
  };
}

async function allAttributes(em: EntityManager): Promise<IdpAttributeView[]> {
  const rows = await em.find(IdpAttribute, {}, { orderBy: { createdAt: 'asc', key: 'asc' } });
  const stored = new Map(rows.map((r) => [r.key, r]));
  const builtins = Object.entries(BUILTIN_ATTRIBUTES).map(([key, b]) => attributeView(stored.get(key) ?? builtinDefaults(key, b)));
  return [...builtins, ...rows.filter((r) => !r.builtin).map(attributeView)];
}

export async function listIdpAttributes(em: EntityManager, query: PageQuery) {
  const all = await allAttributes(em);
  const start = (query.page - 1) * query.per_page;
  return toPage(all.slice(start, start + query.per_page), all.length, query);
}

/**
 * The existing key `key` spells in any case: a built-in's (`Email` is `email`) or a stored one's, or
 * null. A key becomes a key of the user's metadata and a SCIM-style attribute name (RFC 7643 §2.1:
 * attribute names are case-insensitive), so `Dept` beside `dept` would be two attributes nobody can tell
 * apart. Keys keep the spelling they were created with; rows in two cases stored before this rule stay.
 */
async function takenKey(scope: AuditScope, key: string): Promise<string | null> {
  const folded = key.toLowerCase();
  if (builtinOf(folded)) return folded;
  const [row] = await scope.em.execute<{ key: string }[]>(
    'select key from idp_attributes where workspace_id = ? and lower(key) = ? order by created_at limit 1',
    [scope.workspaceId, folded],
  );
  return row?.key ?? null;
}

export async function createIdpAttribute(
  scope: AuditScope,
  input: z.infer<typeof createIdpAttributeInput>,
  now: Date,
): Promise<IdpAttributeView> {
  await lockUntilCommit(scope.em, 'idpAttributeKey', `${scope.workspaceId} ${input.key.toLowerCase()}`);
  const taken = await takenKey(scope, input.key);
  if (taken !== null) {
    throw takenConflict(
      'key',
      `An attribute with the key "${taken}" already exists (keys are unique whatever their case); ` +
        `give another key, with "claim": "${input.key}" if that is the claim to read`,
    );
  }
  const row = Object.assign(new IdpAttribute(), {
    id: newId('ida'),
    workspaceId: scope.workspaceId,
    key: input.key,
    name: input.name ?? input.key,
    claim: input.claim ?? input.key,
    builtin: false,
    enabled: input.enabled,
    createdAt: now,
  });
  scope.em.persist(row);
  recordAudit(scope, { eventType: 'idp_attribute.create', target: { type: 'idp_attribute', id: row.key }, details: { claim: row.claim } });
  return attributeView(row);
}

/**
 * A built-in's stored row, made on its first change. Concurrent first changes (a double click) all
 * find the one row: the insert gives way to another's on the unique key instead of failing on it.
 */
async function builtinRow(scope: AuditScope, key: string, now: Date): Promise<IdpAttribute | null> {
  const builtin = builtinOf(key);
  if (!builtin) return null;
  await scope.em.execute(
    `insert into idp_attributes (id, workspace_id, key, name, claim, builtin, enabled, created_at) values (?, ?, ?, ?, null, true, ?, ?)
     on conflict (workspace_id, key) do nothing`,
    [newId('ida'), scope.workspaceId, key, builtin.name, builtin.enabled, now],
  );
  return scope.em.findOne(IdpAttribute, { key });
}

export async function updateIdpAttribute(
  scope: AuditScope,
  input: z.infer<typeof updateIdpAttributeInput>,
  now: Date,
): Promise<IdpAttributeView> {
  const builtin = builtinOf(input.key);
  const stored = await scope.em.findOne(IdpAttribute, { key: input.key });
  const current = stored ?? (builtin ? builtinDefaults(input.key, builtin) : null);
  if (!current) throw new AppError('NOT_FOUND', 'No such attribute');
  // Nothing sent differs from what is stored (or a built-in's defaults): nothing is written (core/patch.ts).
  if (!differs(input.enabled, current.enabled) && !differs(input.name, current.name)) return attributeView(current);
  const row = stored ?? (await builtinRow(scope, input.key, now));
  if (!row) throw new AppError('NOT_FOUND', 'No such attribute');
  if (input.enabled !== undefined) row.enabled = input.enabled;
  if (input.name) row.name = input.name;
  scope.em.persist(row);
  recordAudit(scope, {
    eventType: 'idp_attribute.update',
    target: { type: 'idp_attribute', id: row.key },
    details: { enabled: row.enabled },
  });
  return attributeView(row);
}

/**
 * The enabled attributes found in an identity provider's profile (OIDC claims or SAML attributes),
 * keyed by attribute key: what sign-in writes onto the user's metadata.
 */
export async function mapProfile(em: EntityManager, profile: Record<string, unknown>): Promise<Record<string, unknown>> {
  const mapped: Record<string, unknown> = {};
  for (const attribute of await allAttributes(em)) {
    if (!attribute.enabled) continue;
    const claim = attribute.claims.find((c) => profile[c] !== undefined && profile[c] !== null && profile[c] !== '');
    if (claim !== undefined) mapped[attribute.key] = profile[claim];
  }
  return mapped;
}
