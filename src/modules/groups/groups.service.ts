import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { likePattern, offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { denyOrphanedRequests } from '../iga/close-requests.ts';
import { memberRowsOf } from '../users/member-rows.ts';
import { findUser } from '../users/users.service.ts';
import { Group, GroupMember } from './group.entity.ts';
import type { GroupMemberView, GroupView } from './groups.schema.ts';
import { takenConflict } from '../../core/conflicts.ts';

function toView(group: Group, memberCount: number): GroupView {
  return {
    id: group.id,
    name: group.name,
    description: group.description,
    member_count: memberCount,
    created_at: group.createdAt.toISOString(),
  };
}

async function memberCounts(em: EntityManager, groupIds: string[]): Promise<Map<string, number>> {
  if (groupIds.length === 0) return new Map();
  const rows = await em.execute<{ group_id: string; n: string }[]>(
    `select group_id, count(*) as n from group_members where group_id in (${groupIds.map(() => '?').join(', ')}) group by group_id`,
    groupIds,
  );
  return new Map(rows.map((r) => [r.group_id, Number(r.n)]));
}

export async function listGroups(em: EntityManager, query: PageQuery & { q?: string }) {
  const where = query.q ? { name: { $ilike: likePattern(query.q) } } : {};
  const [groups, total] = await em.findAndCount(Group, where, { orderBy: { name: 'asc', id: 'asc' }, ...offsetOf(query) });
  const counts = await memberCounts(
    em,
    groups.map((g) => g.id),
  );
  return toPage(
    groups.map((g) => toView(g, counts.get(g.id) ?? 0)),
    total,
    query,
  );
}

async function findGroup(em: EntityManager, id: string): Promise<Group> {
  const group = isId('grp', id) ? await em.findOne(Group, { id }) : null;
  if (!group) throw new AppError('NOT_FOUND', 'No such group');
  return group;
}

async function memberCount(em: EntityManager, groupId: string): Promise<number> {
  return (await memberCounts(em, [groupId])).get(groupId) ?? 0;
}

export async function getGroup(em: EntityManager, id: string): Promise<GroupView> {
  const group = await findGroup(em, id);
  return toView(group, await memberCount(em, group.id));
}

async function assertNameFree(scope: AuditScope, name: string, exceptId?: string) {
  const taken = await scope.em.execute<{ id: string }[]>(
    'select id from groups where workspace_id = ? and lower(name) = lower(?) and id <> ?',
    [scope.workspaceId, name, exceptId ?? ''],
  );
  if (taken.length > 0) throw takenConflict('name', 'A group with this name already exists');
}

/** Renames a group or changes its description; `description: null` clears it. */
export async function updateGroup(
  scope: AuditScope,
  input: { id: string; name?: string; description?: string | null },
): Promise<GroupView> {
  const group = await findGroup(scope.em, input.id);
  const changed: string[] = [];
  if (input.name !== undefined && input.name !== group.name) {
    await assertNameFree(scope, input.name, group.id);
    group.name = input.name;
    changed.push('name');
  }
  if (input.description !== undefined && input.description !== group.description) {
    group.description = input.description;
    changed.push('description');
  }
  if (changed.length > 0)
    recordAudit(scope, { eventType: 'group.update', target: { type: 'group', id: group.id }, details: { changed, name: group.name } });
  return toView(group, await memberCount(scope.em, group.id));
}

/** A group's members with their email and name, oldest membership first. */
export async function listGroupMembers(em: EntityManager, workspaceId: string, groupId: string, query: PageQuery) {
  const group = await findGroup(em, groupId);
  const members = await memberRowsOf(em, 'group', workspaceId, group.id, query);
  return toPage(
    members.map((member): GroupMemberView => ({ group_id: group.id, ...member })),
    await memberCount(em, group.id),
    query,
  );
}

export async function createGroup(scope: AuditScope, input: { name: string; description?: string }, now: Date): Promise<GroupView> {
  await assertNameFree(scope, input.name);
  const group = Object.assign(new Group(), {
    id: newId('grp'),
    workspaceId: scope.workspaceId,
    name: input.name,
    description: input.description ?? null,
    createdAt: now,
  });
  scope.em.persist(group);
  recordAudit(scope, { eventType: 'group.create', target: { type: 'group', id: group.id }, details: { name: group.name } });
  return toView(group, 0);
}

export async function deleteGroup(scope: AuditScope, id: string, now: Date) {
  const group = await findGroup(scope.em, id);
  const deniedRequests = await denyOrphanedRequests(scope, { entitlementId: group.id }, 'The group was deleted', now);
  await scope.em.nativeDelete(GroupMember, { groupId: group.id });
  scope.em.remove(group);
  recordAudit(scope, {
    eventType: 'group.delete',
    target: { type: 'group', id: group.id },
    details: { name: group.name, denied_requests: deniedRequests },
  });
  return { id: group.id, deleted: true as const };
}

export async function addMember(scope: AuditScope, groupId: string, userId: string, now: Date) {
  const group = await findGroup(scope.em, groupId);
  const user = await findUser(scope.em, userId);
  if (await scope.em.count(GroupMember, { groupId: group.id, userId: user.id }))
    throw takenConflict('user_id', 'This user is already a member', 'is already a member');
  const member = Object.assign(new GroupMember(), {
    id: newId('gmb'),
    workspaceId: scope.workspaceId,
    groupId: group.id,
    userId: user.id,
    createdAt: now,
  });
  scope.em.persist(member);
  recordAudit(scope, { eventType: 'group.member_add', target: { type: 'group', id: group.id }, details: { user_id: user.id } });
  return { group_id: group.id, user_id: user.id, added_at: now.toISOString() };
}

export async function removeMember(scope: AuditScope, groupId: string, userId: string) {
  const group = await findGroup(scope.em, groupId);
  const member = isId('usr', userId) ? await scope.em.findOne(GroupMember, { groupId: group.id, userId }) : null;
  if (!member) throw new AppError('NOT_FOUND', 'This user is not a member of this group');
  scope.em.remove(member);
  recordAudit(scope, { eventType: 'group.member_remove', target: { type: 'group', id: group.id }, details: { user_id: userId } });
  return { id: userId, deleted: true as const };
}
