import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export interface OidcConnectionConfig {
  issuer: string;
  client_id: string;
  scopes: string[];
}

export interface SamlConnectionConfig {
  entity_id: string;
  sso_url: string;
  /** The IdP's signing certificates, base64 DER. */
  certificates: string[];
  metadata_url: string | null;
}

/** The identity provider an organization's IT admin configured through the Admin Portal. */
export class SsoConnection {
  id!: string;
  workspaceId!: string;
  organizationId!: string;
  kind!: 'oidc' | 'saml';
  config!: OidcConnectionConfig | SamlConnectionConfig;
  /** The OIDC client secret, sealed under the master key; null for SAML. */
  secretSealed!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export const SsoConnectionSchema = new EntitySchema<SsoConnection>({
  class: SsoConnection,
  tableName: 'sso_connections',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    organizationId: { type: 'string' },
    kind: { type: 'string' },
    config: { type: 'json' },
    secretSealed: { type: 'string', nullable: true, lazy: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
