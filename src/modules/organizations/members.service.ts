import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { takenConflict } from '../../core/conflicts.ts';
import { AppError } from '../../core/errors.ts';
import { isId } from '../../core/ids.ts';
import { toPage, type PageQuery } from '../../core/pagination.ts';
import { memberRowsOf } from '../users/member-rows.ts';
import { findUser } from '../users/users.service.ts';
import { OrganizationMember } from './organization.entity.ts';
import type { OrganizationMemberView } from './organizations.schema.ts';
import { findOrganization, joinOrganization } from './organizations.service.ts';

/** The organization's members (those SSO signed in, and those an admin added), oldest first. */
export async function listMembers(em: EntityManager, workspaceId: string, organizationId: string, query: PageQuery) {
  const org = await findOrganization(em, organizationId);
  const members = await memberRowsOf(em, 'organization', workspaceId, org.id, query);
  return toPage(
    members.map((member): OrganizationMemberView => ({ organization_id: org.id, ...member })),
    await em.count(OrganizationMember, { organizationId: org.id }),
    query,
  );
}

/** Adds a user of the workspace to the organization; one who is a member already is 409 (two adds at once too). */
export async function addMember(scope: AuditScope, organizationId: string, userId: string, now: Date): Promise<OrganizationMemberView> {
  const org = await findOrganization(scope.em, organizationId);
  const user = await findUser(scope.em, userId);
  if (!(await joinOrganization(scope.em, scope.workspaceId, org.id, user.id, now))) {
    throw takenConflict('user_id', 'This user is already a member of this organization', 'is already a member');
  }
  recordAudit(scope, {
    eventType: 'organization.member_add',
    target: { type: 'organization', id: org.id },
    details: { user_id: user.id },
  });
  return { organization_id: org.id, user_id: user.id, email: user.email, name: user.name, added_at: now.toISOString() };
}

/** Takes a user out of the organization (the account stays); a user who is not a member is 404. */
export async function removeMember(scope: AuditScope, organizationId: string, userId: string) {
  const org = await findOrganization(scope.em, organizationId);
  const member = isId('usr', userId) ? await scope.em.findOne(OrganizationMember, { organizationId: org.id, userId }) : null;
  if (!member) throw new AppError('NOT_FOUND', 'This user is not a member of this organization');
  scope.em.remove(member);
  recordAudit(scope, {
    eventType: 'organization.member_remove',
    target: { type: 'organization', id: org.id },
    details: { user_id: userId },
  });
  return { id: userId, deleted: true as const };
}
