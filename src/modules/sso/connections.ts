import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import type { CryptoBox } from '../../core/crypto-box.ts';
import { newId } from '../../core/ids.ts';
import { differs } from '../../core/patch.ts';
import { constantTimeEqual } from '../../core/secrets.ts';
import { emitEvent } from '../events/events.ts';
import type { Organization } from '../organizations/organization.entity.ts';
import type { SsoConnectionView } from '../organizations/organizations.schema.ts';
import { SsoConnection, type OidcConnectionConfig, type SamlConnectionConfig } from './sso-connection.entity.ts';

/** Where an organization's identity provider sends its users back: shown in the Admin Portal. */
export function serviceProviderOf(baseUrl: string, organizationId: string) {
  const saml = `${baseUrl}/api/v1/auth/sso/saml/${organizationId}`;
  return {
    entity_id: `${saml}/metadata`,
    acs_url: `${saml}/acs`,
    metadata_url: `${saml}/metadata`,
    redirect_uri: `${baseUrl}/api/v1/auth/sso/oidc/callback`,
  };
}

/** Enough of a secret to recognise it, never enough to use it. */
export function mask(secret: string): string {
  return secret.length <= 8 ? '••••' : `••••${secret.slice(-4)}`;
}

/**
 * Whether a sent secret differs from the sealed one (none sent keeps it): sealing draws a fresh IV, so
 * sameness is read by opening the stored one, compared in constant time, never logged.
 */
export function secretDiffers(box: CryptoBox, sealed: string | null, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  return sealed === null || !constantTimeEqual(box.open(sealed), sent);
}

function fingerprint(certificate: string): string {
  const hex = createHash('sha256').update(Buffer.from(certificate, 'base64')).digest('hex').toUpperCase();
  return hex.match(/.{2}/g)?.join(':') ?? hex;
}

export async function findConnection(em: EntityManager, organizationId: string): Promise<SsoConnection | null> {
  return em.findOne(SsoConnection, { organizationId }, { populate: ['secretSealed'] });
}

export function connectionView(connection: SsoConnection, org: Organization, box: CryptoBox, baseUrl: string): SsoConnectionView {
  const oidc = connection.kind === 'oidc' ? (connection.config as OidcConnectionConfig) : null;
  const saml = connection.kind === 'saml' ? (connection.config as SamlConnectionConfig) : null;
  return {
    id: connection.id,
    organization_id: connection.organizationId,
    kind: connection.kind,
    active: org.sso.enabled,
    oidc: oidc
      ? {
          issuer: oidc.issuer,
          client_id: oidc.client_id,
          client_secret: connection.secretSealed ? mask(box.open(connection.secretSealed)) : '',
          scopes: oidc.scopes,
        }
      : null,
    saml: saml
      ? {
          entity_id: saml.entity_id,
          sso_url: saml.sso_url,
          certificate_fingerprints: saml.signing_certs.map(fingerprint),
          metadata_url: saml.metadata_url,
        }
      : null,
    service_provider: serviceProviderOf(baseUrl, org.id),
    created_at: connection.createdAt.toISOString(),
    updated_at: connection.updatedAt.toISOString(),
  };
}

/** The organization's connection, or (nothing submitted yet) an empty one with our service-provider values. */
export async function getConnectionView(em: EntityManager, org: Organization, box: CryptoBox, baseUrl: string): Promise<SsoConnectionView> {
  const connection = await findConnection(em, org.id);
  if (connection) return connectionView(connection, org, box, baseUrl);
  return {
    id: null,
    organization_id: org.id,
    kind: null,
    active: false,
    oidc: null,
    saml: null,
    service_provider: serviceProviderOf(baseUrl, org.id),
    created_at: null,
    updated_at: null,
  };
}

/** Saves (or replaces) the organization's connection; the caller has tested it first. */
export async function saveConnection(
  scope: AuditScope,
  box: CryptoBox,
  org: Organization,
  input: { kind: 'oidc'; config: OidcConnectionConfig; clientSecret: string } | { kind: 'saml'; config: SamlConnectionConfig },
  now: Date,
): Promise<SsoConnection> {
  const existing = await findConnection(scope.em, org.id);
  // The connection it already has, re-submitted: nothing is written (core/patch.ts).
  if (
    existing &&
    existing.kind === input.kind &&
    !differs(input.config, existing.config) &&
    (input.kind === 'saml' ? existing.secretSealed === null : !secretDiffers(box, existing.secretSealed, input.clientSecret))
  ) {
    return existing;
  }
  const connection =
    existing ??
    Object.assign(new SsoConnection(), { id: newId('sso'), workspaceId: scope.workspaceId, organizationId: org.id, createdAt: now });
  Object.assign(connection, {
    kind: input.kind,
    config: input.config,
    secretSealed: input.kind === 'oidc' ? box.seal(input.clientSecret) : null,
    updatedAt: now,
  });
  scope.em.persist(connection);
  recordAudit(scope, {
    eventType: 'organization.sso_connection',
    target: { type: 'organization', id: org.id },
    details:
      input.kind === 'oidc'
        ? { kind: 'oidc', issuer: input.config.issuer, client_id: input.config.client_id }
        : { kind: 'saml', entity_id: input.config.entity_id },
  });
  emitEvent(scope, 'sso_connection.saved', { id: connection.id, organization_id: org.id, kind: input.kind }, now);
  await scope.em.flush();
  return connection;
}
