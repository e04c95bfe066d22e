import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { AppError } from '../../core/errors.ts';
import { isId, newId } from '../../core/ids.ts';
import { offsetOf, toPage, type PageQuery } from '../../core/pagination.ts';
import { newSecret, sha256 } from '../../core/secrets.ts';
import { Application, isConfidential, type ApplicationType } from './application.entity.ts';
import type { ApplicationView } from './applications.schema.ts';
import { differs } from '../../core/patch.ts';
import { postLogoutRedirectUriProblems, redirectUriProblems } from './redirect-uris.ts';

/**
 * Where a type's tokens come from: the browser-facing types sign users in, `m2m` acts as itself. A
 * `web` app keeps a secret too, so it may also act as itself (as Auth0's regular web apps may): such
 * a token names no user and carries nothing an `m2m` app's would not (docs/decisions.md).
 */
export function grantTypesOf(type: ApplicationType): string[] {
  if (type === 'm2m') return ['client_credentials'];
  if (type === 'web') return ['authorization_code', 'refresh_token', 'client_credentials'];
  return ['authorization_code', 'refresh_token'];
}

function toView(app: Application): ApplicationView {
  return {
    id: app.id,
    client_id: app.id,
    name: app.name,
    type: app.type,
    redirect_uris: app.redirectUris,
    post_logout_redirect_uris: app.postLogoutRedirectUris,
    grant_types: grantTypesOf(app.type),
    token_endpoint_auth_method: isConfidential(app.type) ? 'client_secret_basic' : 'none',
    client_secret_prefix: app.secretPrefix,
    secret_rotated_at: app.secretRotatedAt?.toISOString() ?? null,
    created_at: app.createdAt.toISOString(),
    updated_at: app.updatedAt.toISOString(),
  };
}

function checkRedirectUris(type: ApplicationType, uris: { redirect?: readonly string[]; postLogout?: readonly string[] }): void {
  const details = [
    ...(uris.redirect ? redirectUriProblems(type, uris.redirect) : []),
    ...(uris.postLogout ? postLogoutRedirectUriProblems(type, uris.postLogout) : []),
  ];
  if (details.length > 0) throw new AppError('BAD_REQUEST', 'The redirect URIs are not acceptable', { details });
}

/** A fresh secret: returned once, kept as its SHA-256 digest and a short prefix. */
function freshSecret(app: Application, now: Date): string {
  const secret = newSecret('cs_');
  Object.assign(app, { secretHash: sha256(secret), secretPrefix: secret.slice(0, 8), secretRotatedAt: now, updatedAt: now });
  return secret;
}

export async function listApplications(em: EntityManager, query: PageQuery & { type?: ApplicationType }) {
  const where = query.type ? { type: query.type } : {};
  const [apps, total] = await em.findAndCount(Application, where, { orderBy: { id: 'asc' }, ...offsetOf(query) });
  return toPage(apps.map(toView), total, query);
}

async function findApplication(em: EntityManager, id: string): Promise<Application> {
  const app = isId('app', id) ? await em.findOne(Application, { id }) : null;
  if (!app) throw new AppError('NOT_FOUND', 'No such application');
  return app;
}

export async function getApplication(em: EntityManager, id: string): Promise<ApplicationView> {
  return toView(await findApplication(em, id));
}

/** The type of an application registered without one: a sign-in app when it names a redirect URI, else a backend. */
function defaultType(redirectUris: readonly string[]): ApplicationType {
  return redirectUris.length > 0 ? 'web' : 'm2m';
}

export async function createApplication(
  scope: AuditScope,
  input: { name: string; type?: ApplicationType; redirect_uris: string[]; post_logout_redirect_uris: string[] },
  now: Date,
): Promise<ApplicationView & { client_secret?: string }> {
  const type = input.type ?? defaultType(input.redirect_uris);
  checkRedirectUris(type, { redirect: input.redirect_uris, postLogout: input.post_logout_redirect_uris });
  const app = Object.assign(new Application(), {
    id: newId('app'),
    workspaceId: scope.workspaceId,
    name: input.name,
    type,
    redirectUris: input.redirect_uris,
    postLogoutRedirectUris: input.post_logout_redirect_uris,
    secretHash: null,
    secretPrefix: null,
    createdAt: now,
    updatedAt: now,
    secretRotatedAt: null,
  });
  const secret = isConfidential(app.type) ? freshSecret(app, now) : undefined;
  scope.em.persist(app);
  recordAudit(scope, {
    eventType: 'application.create',
    target: { type: 'application', id: app.id },
    details: {
      name: app.name,
      type: app.type,
      redirect_uris: app.redirectUris,
      post_logout_redirect_uris: app.postLogoutRedirectUris,
    },
  });
  await scope.em.flush();
  return { ...toView(app), ...(secret ? { client_secret: secret } : {}) };
}

export async function updateApplication(
  scope: AuditScope,
  input: { id: string; name?: string; redirect_uris?: string[]; post_logout_redirect_uris?: string[] },
  now: Date,
): Promise<ApplicationView> {
  const app = await findApplication(scope.em, input.id);
  checkRedirectUris(app.type, { redirect: input.redirect_uris, postLogout: input.post_logout_redirect_uris });
  const changes = {
    ...(differs(input.name, app.name) ? { name: input.name } : {}),
    ...(differs(input.redirect_uris, app.redirectUris) ? { redirect_uris: input.redirect_uris } : {}),
    ...(differs(input.post_logout_redirect_uris, app.postLogoutRedirectUris)
      ? { post_logout_redirect_uris: input.post_logout_redirect_uris }
      : {}),
  };
  // Nothing sent differs from what is stored: nothing is written (core/patch.ts).
  if (Object.keys(changes).length === 0) return toView(app);
  Object.assign(app, {
    name: changes.name ?? app.name,
    redirectUris: changes.redirect_uris ?? app.redirectUris,
    postLogoutRedirectUris: changes.post_logout_redirect_uris ?? app.postLogoutRedirectUris,
    updatedAt: now,
  });
  recordAudit(scope, { eventType: 'application.update', target: { type: 'application', id: app.id }, details: changes });
  await scope.em.flush();
  return toView(app);
}

/** A new secret; the old one stops working at once (the client is read from the database on every use). */
export async function rotateSecret(scope: AuditScope, id: string, now: Date): Promise<ApplicationView & { client_secret: string }> {
  const app = await findApplication(scope.em, id);
  if (!isConfidential(app.type)) {
    throw new AppError('BAD_REQUEST', `A ${app.type} application is a public client and has no client secret`);
  }
  const secret = freshSecret(app, now);
  recordAudit(scope, {
    eventType: 'application.rotate_secret',
    target: { type: 'application', id: app.id },
    details: { client_secret_prefix: app.secretPrefix },
  });
  await scope.em.flush();
  return { ...toView(app), client_secret: secret };
}

/** Deletes the application and, in the same transaction, every code, token and grant issued to it. */
export async function deleteApplication(scope: AuditScope, id: string) {
  const app = await findApplication(scope.em, id);
  scope.em.remove(app);
  recordAudit(scope, {
    eventType: 'application.delete',
    target: { type: 'application', id: app.id },
    details: { name: app.name, type: app.type },
  });
  await scope.em.flush();
  await scope.em.execute('delete from oidc_payloads where client_id = ?', [app.id]);
  return { id: app.id, deleted: true as const };
}
