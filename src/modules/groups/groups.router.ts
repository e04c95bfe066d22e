import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import {
  addMemberInput,
  createGroupInput,
  groupIdInput,
  groupMemberPage,
  groupOutput,
  groupPage,
  listGroupMembersInput,
  listGroupsInput,
  membershipOutput,
  removeMemberInput,
  updateGroupInput,
} from './groups.schema.ts';
import { groupsOfUsers, groupsOfUsersInput, groupsOfUsersOutput } from './groups-of-users.ts';
import {
  addMember,
  createGroup,
  deleteGroup,
  getGroup,
  listGroupMembers,
  listGroups,
  removeMember,
  updateGroup,
} from './groups.service.ts';

const tags = ['groups'];

export const groupsRouter = router({
  list: managementProcedure('groups:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/groups', tags, summary: 'List groups', protect: true } })
    .input(listGroupsInput)
    .output(groupPage)
    .query(({ ctx, input }) => listGroups(ctx.em, input)),

  /** GraphQL and the dashboard: the groups of a page of users, for the users report's dataloader. */
  ofUsers: managementProcedure('groups:read')
    .input(groupsOfUsersInput)
    .output(groupsOfUsersOutput)
    .query(({ ctx, input }) => groupsOfUsers(ctx.em, ctx.workspaceId, input.ids)),

  create: managementProcedure('groups:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/groups', tags, summary: 'Create a group', protect: true },
      successStatus: 201,
      audit: 'group.create',
      conflict: 'A group with this name already exists',
    })
    .input(createGroupInput)
    .output(groupOutput)
    .mutation(({ ctx, input }) => createGroup(auditScope(ctx), input, ctx.deps.clock.now())),

  get: managementProcedure('groups:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/groups/{id}', tags, summary: 'Get a group', protect: true } })
    .input(groupIdInput)
    .output(groupOutput)
    .query(({ ctx, input }) => getGroup(ctx.em, input.id)),

  update: managementProcedure('groups:write')
    .meta({
      openapi: { method: 'PATCH', path: '/api/v1/groups/{id}', tags, summary: 'Rename a group or change its description', protect: true },
      audit: 'group.update',
      conflict: 'A group with this name already exists',
    })
    .input(updateGroupInput)
    .output(groupOutput)
    .mutation(({ ctx, input }) => updateGroup(auditScope(ctx), input)),

  members: managementProcedure('groups:read')
    .meta({
      openapi: { method: 'GET', path: '/api/v1/groups/{id}/members', tags, summary: 'List the members of a group', protect: true },
    })
    .input(listGroupMembersInput)
    .output(groupMemberPage)
    .query(({ ctx, input }) => listGroupMembers(ctx.em, ctx.workspaceId, input.id, input)),

  delete: managementProcedure('groups:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/groups/{id}', tags, summary: 'Delete a group', protect: true },
      audit: 'group.delete',
    })
    .input(groupIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteGroup(auditScope(ctx), input.id, ctx.deps.clock.now())),

  addMember: managementProcedure('groups:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/groups/{id}/members', tags, summary: 'Add a user to a group', protect: true },
      successStatus: 201,
      audit: 'group.member_add',
      bodyIds: ['user_id'],
      conflict: 'The user is a member already',
    })
    .input(addMemberInput)
    .output(membershipOutput)
    .mutation(({ ctx, input }) => addMember(auditScope(ctx), input.id, input.user_id, ctx.deps.clock.now())),

  removeMember: managementProcedure('groups:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/groups/{id}/members/{user_id}',
        tags,
        summary: 'Remove a user from a group',
        protect: true,
      },
      audit: 'group.member_remove',
    })
    .input(removeMemberInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeMember(auditScope(ctx), input.id, input.user_id)),
});
