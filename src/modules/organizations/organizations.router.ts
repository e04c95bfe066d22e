import { auditScope } from '../../core/audit-scope.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { managementProcedure, router } from '../../core/trpc.ts';
import { getConnectionView } from '../sso/connections.ts';
import { addMember, listMembers, removeMember } from './members.service.ts';
import {
  addMemberInput,
  createOrganizationInput,
  listMembersInput,
  listOrganizationsInput,
  organizationIdInput,
  organizationMemberOutput,
  organizationMemberPage,
  organizationOutput,
  organizationPage,
  portalLinkInput,
  portalLinkOutput,
  removeMemberInput,
  ssoConnectionOutput,
  updateOrganizationInput,
} from './organizations.schema.ts';
import {
  createOrganization,
  createPortalLink,
  deleteOrganization,
  findOrganization,
  getOrganization,
  listOrganizations,
  updateOrganization,
} from './organizations.service.ts';

const tags = ['organizations'];

export const organizationsRouter = router({
  list: managementProcedure('organizations:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/organizations', tags, summary: 'List organizations', protect: true } })
    .input(listOrganizationsInput)
    .output(organizationPage)
    .query(({ ctx, input }) => listOrganizations(ctx.em, input)),

  create: managementProcedure('organizations:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/organizations', tags, summary: 'Create an organization', protect: true },
      successStatus: 201,
      audit: 'organization.create',
      conflict: 'A domain belongs to another organization',
    })
    .input(createOrganizationInput)
    .output(organizationOutput)
    .mutation(({ ctx, input }) => createOrganization(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),

  portalLink: managementProcedure('organizations:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/organizations/portal-link',
        tags,
        summary: 'Create a single-use Admin Portal link (5 minutes) for the organization’s IT admin',
        protect: true,
      },
      successStatus: 201,
      audit: 'organization.portal_link',
      bodyIds: ['organization_id', 'organization'],
      targetInBody: { collection: 'organizations', members: ['organization_id', 'organization'] },
    })
    .input(portalLinkInput)
    .output(portalLinkOutput)
    .mutation(({ ctx, input }) => createPortalLink(auditScope(ctx), input.organization_id, ctx.deps.config.BASE_URL, ctx.deps.clock.now())),

  get: managementProcedure('organizations:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/organizations/{id}', tags, summary: 'Get an organization', protect: true } })
    .input(organizationIdInput)
    .output(organizationOutput)
    .query(({ ctx, input }) => getOrganization(ctx.em, input.id)),

  update: managementProcedure('organizations:write')
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/organizations/{id}',
        tags,
        summary: 'Update name, domains or SSO settings',
        protect: true,
      },
      audit: 'organization.update',
      conflict: 'A domain belongs to another organization',
    })
    .input(updateOrganizationInput)
    .output(organizationOutput)
    .mutation(({ ctx, input }) => updateOrganization(auditScope(ctx), ctx.principal, input, ctx.deps.clock.now())),

  delete: managementProcedure('organizations:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/organizations/{id}', tags, summary: 'Delete an organization', protect: true },
      audit: 'organization.delete',
    })
    .input(organizationIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => deleteOrganization(auditScope(ctx), input.id)),

  members: managementProcedure('organizations:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/organizations/{id}/members',
        tags,
        summary: 'List the members of an organization (users its SSO signed in, and users added to it)',
        protect: true,
      },
    })
    .input(listMembersInput)
    .output(organizationMemberPage)
    .query(({ ctx, input }) => listMembers(ctx.em, ctx.workspaceId, input.id, input)),

  addMember: managementProcedure('organizations:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/organizations/{id}/members',
        tags,
        summary: 'Add a user to an organization',
        protect: true,
      },
      successStatus: 201,
      audit: 'organization.member_add',
      bodyIds: ['user_id'],
      conflict: 'The user is a member already',
    })
    .input(addMemberInput)
    .output(organizationMemberOutput)
    .mutation(({ ctx, input }) => addMember(auditScope(ctx), input.id, input.user_id, ctx.deps.clock.now())),

  removeMember: managementProcedure('organizations:write')
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/organizations/{id}/members/{user_id}',
        tags,
        summary: 'Remove a user from an organization (the account stays; SSO sign-in makes them a member again)',
        protect: true,
      },
      audit: 'organization.member_remove',
    })
    .input(removeMemberInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => removeMember(auditScope(ctx), input.id, input.user_id)),

  ssoConnection: managementProcedure('organizations:read')
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/organizations/{id}/sso-connection',
        tags,
        summary: 'See the SSO details submitted through the Admin Portal (secrets masked)',
        protect: true,
      },
    })
    .input(organizationIdInput)
    .output(ssoConnectionOutput)
    .query(async ({ ctx, input }) =>
      getConnectionView(ctx.em, await findOrganization(ctx.em, input.id), ctx.deps.box, ctx.deps.config.BASE_URL),
    ),
});
