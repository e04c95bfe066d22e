import { assertPasswordAllowed } from '../auth/password-policy.ts';
import { auditScope } from '../../core/audit-scope.ts';
import { originOf } from '../../core/context.ts';
import { deletedOutput } from '../../core/pagination.ts';
import { limitedPublicProcedure, managementProcedure, router } from '../../core/trpc.ts';
import { tokensOutput } from '../auth/auth.schema.ts';
import {
  acceptInvitationInput,
  createInvitationInput,
  invitationIdInput,
  invitationOutput,
  invitationPage,
  listInvitationsInput,
} from './invitations.schema.ts';
import {
  acceptInvitation,
  createInvitation,
  getInvitation,
  listInvitations,
  resendInvitation,
  revokeInvitation,
} from './invitations.service.ts';

const tags = ['invitations'];

export const invitationsRouter = router({
  list: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/invitations', tags, summary: 'List invitations (filter by status)', protect: true } })
    .input(listInvitationsInput)
    .output(invitationPage)
    .query(({ ctx, input }) => listInvitations(ctx.em, input, ctx.deps.clock.now())),

  get: managementProcedure('users:read')
    .meta({ openapi: { method: 'GET', path: '/api/v1/invitations/{id}', tags, summary: 'Get an invitation', protect: true } })
    .input(invitationIdInput)
    .output(invitationOutput)
    .query(({ ctx, input }) => getInvitation(ctx.em, input.id, ctx.deps.clock.now())),

  create: managementProcedure('users:write')
    .meta({
      openapi: { method: 'POST', path: '/api/v1/invitations', tags, summary: 'Invite someone by email', protect: true },
      successStatus: 201,
      audit: 'invitation.create',
      bodyIds: ['role_id', 'role'],
      conflict: 'The email has a user or a pending invitation already',
    })
    .input(createInvitationInput)
    .output(invitationOutput)
    .mutation(async ({ ctx, input }) => {
      const invitation = await createInvitation(ctx.deps, auditScope(ctx), ctx.principal, input, ctx.deps.clock.now());
      ctx.afterCommit.push(() => ctx.deps.mailer.kick());
      return invitation;
    }),

  resend: managementProcedure('users:write')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/invitations/{id}/resend',
        tags,
        summary: 'Send an invitation again (a new link)',
        protect: true,
      },
      audit: 'invitation.resend',
      conflict: 'The invitation is no longer pending, or its address has a user by now',
    })
    .input(invitationIdInput)
    .output(invitationOutput)
    .mutation(async ({ ctx, input }) => {
      const invitation = await resendInvitation(ctx.deps, auditScope(ctx), input.id, ctx.deps.clock.now());
      ctx.afterCommit.push(() => ctx.deps.mailer.kick());
      return invitation;
    }),

  revoke: managementProcedure('users:write')
    .meta({
      openapi: { method: 'DELETE', path: '/api/v1/invitations/{id}', tags, summary: 'Revoke an invitation', protect: true },
      audit: 'invitation.revoke',
      conflict: 'The invitation is no longer pending',
    })
    .input(invitationIdInput)
    .output(deletedOutput)
    .mutation(({ ctx, input }) => revokeInvitation(auditScope(ctx), input.id, ctx.deps.clock.now())),

  accept: limitedPublicProcedure('invitationAccept')
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/invitations/accept',
        tags,
        summary: 'Accept an invitation: creates the user and signs them in',
      },
      conflict: 'The email has a user by now',
      hashes: ['password'],
      // The acceptance commits, then the sign-in runs the post-login actions holding no connection.
      ownTransaction: true,
    })
    .input(acceptInvitationInput)
    .output(tokensOutput)
    .mutation(({ ctx, input }) => {
      assertPasswordAllowed(ctx.deps.config, input.password, 'password');
      return acceptInvitation(ctx.deps, ctx.em, input, originOf(ctx));
    }),
});
