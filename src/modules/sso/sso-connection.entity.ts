import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';
import type { IdpSamlConfig } from './saml.ts';

export interface OidcConnectionConfig {
  issuer: string;
  client_id: string;
  scopes: string[];
}

/** The IdP's metadata as parsed (saml.ts), and where it was fetched from, if from a URL. */
export interface SamlConnectionConfig extends IdpSamlConfig {
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
