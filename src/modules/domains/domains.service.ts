import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { checkTxtRecord, TXT_LABEL, TXT_VALUE_PREFIX, type TxtCheck } from './dns-check.ts';
import { CustomDomain, type DomainStatus } from './domain.entity.ts';
import type { DomainView } from './domains.schema.ts';
import { takenConflict } from '../../core/conflicts.ts';

const CLAIMED_ELSEWHERE = 'This domain is verified by another workspace';

function toView(row: CustomDomain): DomainView {
  return {
    id: row.id,
    domain: row.domain,
    status: row.status,
    verification: { type: 'TXT', name: `${TXT_LABEL}.${row.domain}`, value: `${TXT_VALUE_PREFIX}${row.verificationToken}` },
    failure_reason: row.status === 'failed' ? row.failureReason : null,
    checked_at: row.checkedAt?.toISOString() ?? null,
    verified_at: row.verifiedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  };
}

export async function listDomains(em: EntityManager, query: PageQuery & { status?: DomainStatus }) {
  const where = query.status ? { status: query.status } : {};
  const [rows, total] = await em.findAndCount(CustomDomain, where, { orderBy: { domain: 'asc', id: 'asc' }, ...offsetOf(query) });
  return toPage(rows.map(toView), total, query);
}

async function findDomain(em: EntityManager, id: string): Promise<CustomDomain> {
  const row = isId('dom', id) ? await em.findOne(CustomDomain, { id }) : null;
  if (!row) throw new AppError('NOT_FOUND', 'No such domain');
  return row;
}

export async function getDomain(em: EntityManager, id: string): Promise<DomainView> {
  return toView(await findDomain(em, id));
}

/** Whether another workspace holds `domain` verified (the one cross-tenant read of this module). */
async function verifiedElsewhere(em: EntityManager, workspaceId: string, domain: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `select id from custom_domains where domain = ? and status = 'verified' and workspace_id <> ? limit 1`,
    [domain, workspaceId],
  );
  return rows.length > 0;
}

/**
 * Claims a domain for the workspace, `pending` until verified, and answers the TXT record to publish.
 * The same domain twice in a workspace is 409, and so is a domain another workspace has verified;
 * several workspaces may hold pending claims (only proving DNS control makes a domain theirs).
 */
export async function addDomain(scope: AuditScope, domain: string, now: Date): Promise<DomainView> {
  const { em } = scope;
  if (await em.count(CustomDomain, { domain })) throw takenConflict('domain', `The domain ${domain} is already added`, 'is already added');
  if (await verifiedElsewhere(em, scope.workspaceId, domain))
    throw takenConflict('domain', CLAIMED_ELSEWHERE, 'is verified by another workspace');
  const row = Object.assign(new CustomDomain(), {
    id: newId('dom'),
    workspaceId: scope.workspaceId,
    domain,
    status: 'pending' as const,
    verificationToken: randomBytes(24).toString('base64url'),
    failureReason: null,
    checkedAt: null,
    verifiedAt: null,
    createdAt: now,
  });
  em.persist(row);
  recordAudit(scope, { eventType: 'domain.create', target: { type: 'domain', id: row.id }, details: { domain } });
  try {
    await em.flush();
  } catch (error) {
    // Two concurrent adds of one domain: the unique index decides, and the loser gets 409 too.
    if (error instanceof UniqueConstraintViolationException)
      throw takenConflict('domain', `The domain ${domain} is already added`, 'is already added');
    throw error;
  }
  return toView(row);
}

/**
 * Checks the domain's TXT record, then records the outcome: `verified` when it is there, `failed`
 * with the reason otherwise (a failed domain may be checked again at any time). The DNS lookup runs
 * before any transaction opens, so a slow resolver holds no database connection.
 */
export async function verifyDomain(
  em: EntityManager,
  makeScope: (em: EntityManager) => AuditScope,
  id: string,
  dnsServers: readonly string[] | undefined,
  now: Date,
): Promise<DomainView> {
  const found = await findDomain(em, id);
  const record = toView(found).verification;
  const check: TxtCheck = await checkTxtRecord(dnsServers, record.name, record.value);
  return em.transactional(async (tx) => {
    const scope = makeScope(tx);
    const row = await tx.findOne(CustomDomain, { id: found.id }, { refresh: true });
    if (!row) throw new AppError('NOT_FOUND', 'No such domain');
    if (check.ok && (await verifiedElsewhere(tx, scope.workspaceId, row.domain))) throw new AppError('CONFLICT', CLAIMED_ELSEWHERE);
    const from = row.status;
    Object.assign(
      row,
      check.ok
        ? { status: 'verified', failureReason: null, checkedAt: now, verifiedAt: row.verifiedAt ?? now }
        : { status: 'failed', failureReason: check.reason, checkedAt: now, verifiedAt: null },
    );
    recordAudit(scope, {
      eventType: 'domain.verify',
      outcome: check.ok ? 'success' : 'failure',
      target: { type: 'domain', id: row.id },
      details: { domain: row.domain, from, to: row.status, ...(check.ok ? {} : { reason: check.reason }) },
    });
    try {
      await tx.flush();
    } catch (error) {
      // Another workspace verified it between our check and our write: the partial unique index decides.
      if (error instanceof UniqueConstraintViolationException) throw new AppError('CONFLICT', CLAIMED_ELSEWHERE);
      throw error;
    }
    return toView(row);
  });
}

export async function deleteDomain(scope: AuditScope, id: string) {
  const row = await findDomain(scope.em, id);
  scope.em.remove(row);
  recordAudit(scope, { eventType: 'domain.delete', target: { type: 'domain', id: row.id }, details: { domain: row.domain } });
  return { id: row.id, deleted: true as const };
}
