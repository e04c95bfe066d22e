import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import express, { Router, type Request, type Response } from 'express';
import type { AuditScope } from '../../core/audit.ts';
import { originOfRequest, type AppDeps } from '../../core/context.ts';
import { toAppError } from '../../core/error-normalize.ts';
import { AppError } from '../../core/errors.ts';
import { sha256 } from '../../core/secrets.ts';
import { TENANT_FILTER } from '../../db/tenant.ts';
import { allowLogo, hostedBranding } from '../branding/hosted.ts';
import { Organization } from '../organizations/organization.entity.ts';
import { findConnection, saveConnection, serviceProviderOf } from './connections.ts';
import { notice, page, PORTAL_CSP, portalPage } from './portal.html.ts';
import { fetchIdpMetadata, parseIdpMetadata } from './saml.ts';
import { rpOptions, testOidcIssuer } from './oidc-rp.ts';

/** How long the IT admin may work in the portal once the single-use link is opened. */
export const PORTAL_SESSION_MS = 30 * 60 * 1000;
const COOKIE = 'portal_session';

interface PortalSession {
  linkId: string;
  workspaceId: string;
  organizationId: string;
}

function cookieOf(req: Request): string | undefined {
  const header = req.get('cookie') ?? '';
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE) return value.join('=');
  }
  return undefined;
}

function send(res: Response, status: number, html: string, csp = PORTAL_CSP): void {
  res
    .status(status)
    .set({ 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp, 'Cache-Control': 'no-store' })
    .send(html);
}

async function sessionOf(deps: AppDeps, req: Request): Promise<PortalSession | null> {
  const secret = cookieOf(req);
  if (!secret) return null;
  const [row] = await deps.orm.em
    .getConnection()
    .execute<{ id: string; workspace_id: string; organization_id: string }[]>(
      'select id, workspace_id, organization_id from portal_links where session_hash = ? and session_expires_at > ?',
      [sha256(secret), deps.clock.now()],
    );
  return row ? { linkId: row.id, workspaceId: row.workspace_id, organizationId: row.organization_id } : null;
}

/** A form post must come from the portal's own page (the cookie is also SameSite=Strict). */
function checkOrigin(deps: AppDeps, req: Request): void {
  const origin = req.get('origin');
  if (origin && origin !== new URL(deps.config.BASE_URL).origin) throw new AppError('FORBIDDEN', 'This form was sent from another site');
}

async function portalContext(deps: AppDeps, session: PortalSession): Promise<{ em: EntityManager; org: Organization }> {
  const em = deps.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { workspaceId: session.workspaceId });
  const org = await em.findOne(Organization, { id: session.organizationId });
  if (!org) throw new AppError('NOT_FOUND', 'This organization no longer exists');
  return { em, org };
}

async function render(
  deps: AppDeps,
  res: Response,
  session: PortalSession,
  status: number,
  message = '',
  values: Record<string, string> = {},
) {
  const { em, org } = await portalContext(deps, session);
  const connection = await findConnection(em, org.id);
  const current = connection
    ? connection.kind === 'oidc'
      ? `OpenID Connect (${(connection.config as { issuer: string }).issuer})`
      : `SAML (${(connection.config as { entity_id: string }).entity_id})`
    : null;
  const brand = await hostedBranding(em, session.workspaceId);
  send(
    res,
    status,
    portalPage(
      { organization: org.name, current, serviceProvider: serviceProviderOf(deps.config.BASE_URL, org.id), values, brand },
      message,
    ),
    allowLogo(PORTAL_CSP, brand.logoUrl),
  );
}

function scopeOf(req: Request, em: EntityManager, session: PortalSession): AuditScope {
  return { em, workspaceId: session.workspaceId, actor: { type: 'system', id: `admin_portal:${session.linkId}` }, ...originOfRequest(req) };
}

/**
 * The Admin Portal: a customer's IT admin, holding a single-use link, configures their organization's
 * SSO connection without an account here. Opening the link consumes it and starts a 30-minute session
 * (an HttpOnly, SameSite=Strict cookie); each connection is tested before it is saved.
 */
export function portalRoutes(deps: AppDeps): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '300kb' });
  const secure = deps.config.BASE_URL.startsWith('https://');

  router.get('/portal', async (req, res, next) => {
    try {
      const token = typeof req.query.token === 'string' ? req.query.token : '';
      const session = randomBytes(32).toString('base64url');
      const now = deps.clock.now();
      const [row] = await deps.orm.em.getConnection().execute<{ id: string }[]>(
        `update portal_links set used_at = ?, session_hash = ?, session_expires_at = ?
          where token_hash = ? and used_at is null and expires_at > ? returning id`,
        [now, sha256(session), new Date(now.getTime() + PORTAL_SESSION_MS), sha256(token), now],
      );
      if (!row) {
        send(
          res,
          401,
          page('This link cannot be used', notice('error', 'This Admin Portal link has expired or was already used. Ask for a new one.')),
        );
        return;
      }
      res.cookie(COOKIE, session, { httpOnly: true, sameSite: 'strict', secure, path: '/portal', maxAge: PORTAL_SESSION_MS });
      res.redirect(303, '/portal/sso');
    } catch (error) {
      next(error);
    }
  });

  const withSession =
    (handler: (req: Request, res: Response, session: PortalSession) => Promise<void>) => async (req: Request, res: Response) => {
      const session = await sessionOf(deps, req).catch((error: unknown) => {
        deps.log.error('portal session lookup failed', { error });
        return null;
      });
      if (!session) {
        send(res, 401, page('Your session has ended', notice('error', 'Open the Admin Portal link again, or ask for a new one.')));
        return;
      }
      try {
        await handler(req, res, session);
      } catch (error) {
        const { appError, internal } = toAppError(error);
        if (internal) deps.log.error('admin portal failed', { error });
        await render(deps, res, session, appError.status, notice('error', appError.message));
      }
    };

  router.get(
    '/portal/sso',
    withSession((_req, res, session) => render(deps, res, session, 200)),
  );

  router.post(
    '/portal/sso/oidc',
    form,
    withSession(async (req, res, session) => {
      checkOrigin(deps, req);
      const body = req.body as Record<string, unknown>;
      const text = (name: string, max: number) => (typeof body[name] === 'string' ? (body[name] as string).trim().slice(0, max) : '');
      const values = { issuer: text('issuer', 500).replace(/\/+$/, ''), client_id: text('client_id', 300) };
      const secret = text('client_secret', 500);
      if (!values.issuer || !values.client_id || !secret) {
        return render(deps, res, session, 400, notice('error', 'Issuer URL, client ID and client secret are all required.'), values);
      }
      const problem = await testOidcIssuer(values.issuer, values.client_id, secret, rpOptions(deps));
      if (problem) return render(deps, res, session, 400, notice('error', `The connection test failed: ${problem}`), values);
      const { em, org } = await portalContext(deps, session);
      await em.transactional((tx) =>
        saveConnection(
          scopeOf(req, tx, session),
          deps.box,
          org,
          {
            kind: 'oidc',
            config: { issuer: values.issuer, client_id: values.client_id, scopes: ['openid', 'email', 'profile'] },
            clientSecret: secret,
          },
          deps.clock.now(),
        ),
      );
      return render(deps, res, session, 200, notice('success', 'The connection was tested and saved.'));
    }),
  );

  router.post(
    '/portal/sso/saml',
    form,
    withSession(async (req, res, session) => {
      checkOrigin(deps, req);
      const body = req.body as Record<string, unknown>;
      const metadataUrl = typeof body.metadata_url === 'string' ? body.metadata_url.trim() : '';
      const pasted = typeof body.metadata_xml === 'string' ? body.metadata_xml.trim() : '';
      if (!metadataUrl && !pasted) {
        return render(deps, res, session, 400, notice('error', 'Give the identity provider’s metadata URL or paste its metadata XML.'));
      }
      const { allowInsecure: insecure, allowPrivate } = rpOptions(deps);
      const xml = pasted || (await fetchIdpMetadata(metadataUrl, { allowInsecure: insecure, allowPrivate }));
      const idp = parseIdpMetadata(xml, { allowInsecure: insecure });
      const { em, org } = await portalContext(deps, session);
      await em.transactional((tx) =>
        saveConnection(
          scopeOf(req, tx, session),
          deps.box,
          org,
          { kind: 'saml', config: { ...idp, metadata_url: pasted ? null : metadataUrl } },
          deps.clock.now(),
        ),
      );
      return render(deps, res, session, 200, notice('success', `The SAML connection to ${idp.entity_id} was checked and saved.`), {
        metadata_url: metadataUrl,
      });
    }),
  );

  return router;
}
