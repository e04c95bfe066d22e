import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { Principal } from '../../core/auth.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { likePattern, offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { sha256 } from '../../core/secrets.ts';
import { emitEvent } from '../events/events.ts';
import { assertMayGrant } from '../roles/owners.ts';
import { Role } from '../roles/role.entity.ts';
import { SsoConnection } from '../sso/sso-connection.entity.ts';
import { Organization, OrganizationDomain, OrganizationMember, type SsoSettings } from './organization.entity.ts';
import type { CreateOrganizationInput, OrganizationView, UpdateOrganizationInput } from './organizations.schema.ts';
import { canonicalEmail } from '../../core/addresses.ts';
import { differs } from '../../core/patch.ts';
import { takenConflict } from '../../core/conflicts.ts';

export const PORTAL_LINK_TTL_MS = 5 * 60 * 1000;

const DEFAULT_SSO: SsoSettings = { enabled: true, jit_provisioning: true, default_role: 'member' };

interface OrganizationFacts {
  domains: Map<string, string[]>;
  connections: Map<string, SsoConnection>;
  members: Map<string, number>;
}

async function factsOf(em: EntityManager, ids: string[]): Promise<OrganizationFacts> {
  if (ids.length === 0) return { domains: new Map(), connections: new Map(), members: new Map() };
  const [domains, connections, members] = [
    await em.find(OrganizationDomain, { organizationId: { $in: ids } }, { orderBy: { domain: 'asc' } }),
    await em.find(SsoConnection, { organizationId: { $in: ids } }),
    await em.execute<{ organization_id: string; n: number }[]>(
      `select organization_id, count(*)::int as n from organization_members where organization_id in (?) group by organization_id`,
      [ids],
    ),
  ];
  const byOrg = new Map<string, string[]>();
  for (const d of domains) byOrg.set(d.organizationId, [...(byOrg.get(d.organizationId) ?? []), d.domain]);
  return {
    domains: byOrg,
    connections: new Map(connections.map((c) => [c.organizationId, c])),
    members: new Map(members.map((m) => [m.organization_id, m.n])),
  };
}

function toView(org: Organization, facts: OrganizationFacts): OrganizationView {
  const connection = facts.connections.get(org.id);
  return {
    id: org.id,
    name: org.name,
    domains: facts.domains.get(org.id) ?? [],
    sso: org.sso,
    connection: connection ? { kind: connection.kind, active: org.sso.enabled } : null,
    member_count: facts.members.get(org.id) ?? 0,
    created_at: org.createdAt.toISOString(),
    updated_at: org.updatedAt.toISOString(),
  };
}

/** What webhooks hear of an organization: no member count (it changes without the organization). */
function eventData(view: OrganizationView) {
  return { id: view.id, name: view.name, domains: view.domains, sso: view.sso };
}

async function viewOf(em: EntityManager, org: Organization): Promise<OrganizationView> {
  return toView(org, await factsOf(em, [org.id]));
}

export async function listOrganizations(em: EntityManager, query: PageQuery & { q?: string }) {
  const where = query.q ? { name: { $ilike: likePattern(query.q) } } : {};
  const [orgs, total] = await em.findAndCount(Organization, where, { orderBy: { name: 'asc', id: 'asc' }, ...offsetOf(query) });
  const facts = await factsOf(
    em,
    orgs.map((o) => o.id),
  );
  return toPage(
    orgs.map((o) => toView(o, facts)),
    total,
    query,
  );
}

export async function findOrganization(em: EntityManager, id: string): Promise<Organization> {
  const org = isId('org', id) ? await em.findOne(Organization, { id }) : null;
  if (!org) throw new AppError('NOT_FOUND', 'No such organization');
  return org;
}

export async function getOrganization(em: EntityManager, id: string): Promise<OrganizationView> {
  return viewOf(em, await findOrganization(em, id));
}

/**
 * The role SSO gives new users must exist, may not be owner, and is handed out by the caller: like an
 * assignment or an invitation, only by one who holds every permission it grants.
 */
async function checkDefaultRole(em: EntityManager, principal: Principal, key: string): Promise<void> {
  if (key === 'owner')
    throw new AppError('BAD_REQUEST', 'SSO cannot grant the owner role', {
      details: [{ path: 'sso.default_role', message: 'must not be owner' }],
    });
  const role = await em.findOne(Role, { key });
  if (!role) {
    throw new AppError('BAD_REQUEST', `No role has the key "${key}"`, {
      details: [{ path: 'sso.default_role', message: 'must be a role key' }],
    });
  }
  assertMayGrant(principal, role);
}

/** Replaces an organization's domains; a domain held by another organization of the workspace is 409. */
async function setDomains(scope: AuditScope, org: Organization, domains: string[]): Promise<void> {
  const wanted = [...new Set(domains)];
  const taken = wanted.length ? await scope.em.find(OrganizationDomain, { domain: { $in: wanted }, organizationId: { $ne: org.id } }) : [];
  if (taken.length > 0) {
    throw new AppError('CONFLICT', `The domain ${taken[0]?.domain} already belongs to another organization`, {
      details: taken.map((t) => ({ path: 'domains', message: `${t.domain} belongs to another organization` })),
    });
  }
  await scope.em.nativeDelete(OrganizationDomain, { organizationId: org.id, domain: { $nin: wanted } });
  const kept = new Set((await scope.em.find(OrganizationDomain, { organizationId: org.id })).map((d) => d.domain));
  for (const domain of wanted.filter((d) => !kept.has(d))) {
    scope.em.persist(
      Object.assign(new OrganizationDomain(), { id: newId('odm'), workspaceId: scope.workspaceId, organizationId: org.id, domain }),
    );
  }
}

/** Two admins claiming one domain at once: the unique index decides, and the loser gets 409 too. */
async function flushClaimingDomains(em: EntityManager): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException)
      throw takenConflict('domains', 'A domain already belongs to another organization');
    throw error;
  }
}

export async function createOrganization(
  scope: AuditScope,
  principal: Principal,
  input: CreateOrganizationInput,
  now: Date,
): Promise<OrganizationView> {
  const sso = { ...DEFAULT_SSO, ...input.sso };
  await checkDefaultRole(scope.em, principal, sso.default_role);
  const org = Object.assign(new Organization(), {
    id: newId('org'),
    workspaceId: scope.workspaceId,
    name: input.name,
    sso,
    createdAt: now,
    updatedAt: now,
  });
  scope.em.persist(org);
  await setDomains(scope, org, input.domains);
  recordAudit(scope, {
    eventType: 'organization.create',
    target: { type: 'organization', id: org.id },
    details: { name: org.name, domains: input.domains },
  });
  await flushClaimingDomains(scope.em);
  const view = await viewOf(scope.em, org);
  emitEvent(scope, 'organization.created', eventData(view), now);
  return view;
}

export async function updateOrganization(
  scope: AuditScope,
  principal: Principal,
  input: UpdateOrganizationInput,
  now: Date,
): Promise<OrganizationView> {
  const org = await findOrganization(scope.em, input.id);
  const changes: Record<string, unknown> = {};
  if (differs(input.name, org.name)) {
    changes.name = { from: org.name, to: input.name };
    org.name = input.name;
  }
  const sso = input.sso === undefined ? undefined : { ...org.sso, ...input.sso };
  if (differs(sso, org.sso)) {
    if (sso.default_role !== org.sso.default_role) await checkDefaultRole(scope.em, principal, sso.default_role);
    changes.sso = { from: org.sso, to: sso };
    org.sso = sso;
  }
  const domains = input.domains === undefined ? undefined : [...new Set(input.domains)].sort();
  const current = (await scope.em.find(OrganizationDomain, { organizationId: org.id })).map((d) => d.domain).sort();
  if (differs(domains, current)) {
    await setDomains(scope, org, domains);
    changes.domains = domains;
  }
  // Nothing sent differs from what is stored: nothing is written (core/patch.ts).
  if (Object.keys(changes).length === 0) return viewOf(scope.em, org);
  org.updatedAt = now;
  recordAudit(scope, { eventType: 'organization.update', target: { type: 'organization', id: org.id }, details: changes });
  await flushClaimingDomains(scope.em);
  const view = await viewOf(scope.em, org);
  emitEvent(scope, 'organization.updated', eventData(view), now);
  return view;
}

export async function deleteOrganization(scope: AuditScope, id: string) {
  const org = await findOrganization(scope.em, id);
  await scope.em.nativeDelete(OrganizationDomain, { organizationId: org.id });
  await scope.em.nativeDelete(OrganizationMember, { organizationId: org.id });
  await scope.em.nativeDelete(SsoConnection, { organizationId: org.id });
  await scope.em.execute('delete from portal_links where organization_id = ?', [org.id]);
  scope.em.remove(org);
  recordAudit(scope, { eventType: 'organization.delete', target: { type: 'organization', id: org.id }, details: { name: org.name } });
  emitEvent(scope, 'organization.deleted', { id: org.id, name: org.name });
  return { id: org.id, deleted: true as const };
}

/** A single-use Admin Portal link for the organization's IT admin; only its hash is kept. */
export async function createPortalLink(scope: AuditScope, organizationId: string, baseUrl: string, now: Date) {
  const org = await findOrganization(scope.em, organizationId);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + PORTAL_LINK_TTL_MS);
  await scope.em.execute(
    `insert into portal_links (id, workspace_id, organization_id, token_hash, expires_at, created_at) values (?, ?, ?, ?, ?, ?)`,
    [newId('ptl'), scope.workspaceId, org.id, sha256(token), expiresAt, now],
  );
  recordAudit(scope, { eventType: 'organization.portal_link', target: { type: 'organization', id: org.id } });
  return { link: `${baseUrl}/portal?token=${token}`, expires_at: expiresAt.toISOString() };
}

/**
 * Adds a user to an organization (SSO sign-in does this); nothing happens when they are in it.
 * Answers whether they joined now (false: a member already).
 */
export async function joinOrganization(
  em: EntityManager,
  workspaceId: string,
  organizationId: string,
  userId: string,
  now: Date,
): Promise<boolean> {
  const inserted = await em.execute<{ id: string }[]>(
    `insert into organization_members (id, workspace_id, organization_id, user_id, created_at) values (?, ?, ?, ?, ?)
     on conflict (organization_id, user_id) do nothing returning id`,
    [newId('omb'), workspaceId, organizationId, userId, now],
  );
  return inserted.length > 0;
}

/** The organizations whose SSO gives new users the role `key` (its `default_role`). */
export async function organizationsGrantingRole(em: EntityManager, workspaceId: string, key: string) {
  return em.execute<{ id: string; name: string }[]>(
    `select id, name from organizations where workspace_id = ? and sso->>'default_role' = ? order by name, id`,
    [workspaceId, key],
  );
}

/** The organization whose domains include the email's, if any. */
export async function organizationForEmail(em: EntityManager, email: string): Promise<Organization | null> {
  const domain = canonicalEmail(email).split('@').pop() ?? '';
  const owned = await em.findOne(OrganizationDomain, { domain });
  return owned ? em.findOne(Organization, { id: owned.organizationId }) : null;
}
