import type { AnyProcedure } from '@trpc/server';
import { createCallerFactory, router, type Meta } from './core/trpc.ts';
import { actionsRouter } from './modules/actions/actions.router.ts';
import { apiKeysRouter } from './modules/api-keys/api-keys.router.ts';
import { applicationsRouter } from './modules/applications/applications.router.ts';
import { auditRouter } from './modules/audit/audit.router.ts';
import { authRouter } from './modules/auth/auth.router.ts';
import { brandingRouter } from './modules/branding/branding.router.ts';
import { domainsRouter } from './modules/domains/domains.router.ts';
import { emailTemplatesRouter } from './modules/email-templates/email-templates.router.ts';
import { groupsRouter } from './modules/groups/groups.router.ts';
import { igaRouter } from './modules/iga/iga.router.ts';
import { invitationsRouter } from './modules/invitations/invitations.router.ts';
import { organizationsRouter } from './modules/organizations/organizations.router.ts';
import { idpAttributesRouter } from './modules/idp-attributes/idp-attributes.router.ts';
import { ssoRouter } from './modules/sso/sso.router.ts';
import { webhooksRouter } from './modules/webhooks/webhooks.router.ts';
import { mfaRouter } from './modules/mfa/mfa.router.ts';
import { rolesRouter } from './modules/roles/roles.router.ts';
import { threatRouter } from './modules/threat/threat.router.ts';
import { usersRouter } from './modules/users/users.router.ts';
import { vaultRouter } from './modules/vault/vault.router.ts';
import { workspacesRouter } from './modules/workspaces/workspaces.router.ts';

export const appRouter = router({
  workspaces: workspacesRouter,
  auth: authRouter,
  mfa: mfaRouter,
  apiKeys: apiKeysRouter,
  users: usersRouter,
  roles: rolesRouter,
  groups: groupsRouter,
  invitations: invitationsRouter,
  organizations: organizationsRouter,
  idpAttributes: idpAttributesRouter,
  sso: ssoRouter,
  applications: applicationsRouter,
  audit: auditRouter,
  threat: threatRouter,
  vault: vaultRouter,
  iga: igaRouter,
  webhooks: webhooksRouter,
  branding: brandingRouter,
  domains: domainsRouter,
  emailTemplates: emailTemplatesRouter,
  actions: actionsRouter,
});

export type AppRouter = typeof appRouter;

export const createCaller = createCallerFactory(appRouter);

/** Every procedure's meta by its dotted path (`users.create`), for the REST status and the OpenAPI paths. */
const procedures = appRouter._def.procedures as unknown as Record<string, AnyProcedure>;
export const procedureMeta = new Map<string, Meta>(
  Object.entries(procedures).map(([path, procedure]) => [path, (procedure._def.meta ?? {}) as Meta]),
);
