import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export const SOCIAL_PROVIDERS = ['google', 'github', 'microsoft', 'oidc'] as const;
export type SocialProviderName = (typeof SOCIAL_PROVIDERS)[number];

export interface SocialProviderConfig {
  client_id: string;
  /** Generic OIDC (and Microsoft tenants): the issuer whose discovery document is used. */
  issuer: string | null;
  scopes: string[];
  /** What the sign-in button says. */
  display_name: string;
}

/** A workspace's sign-in with Google, GitHub, Microsoft or any OpenID provider. */
export class SocialProvider {
  id!: string;
  workspaceId!: string;
  provider!: SocialProviderName;
  config!: SocialProviderConfig;
  secretSealed!: string;
  enabled!: boolean;
  createdAt!: Date;
  updatedAt!: Date;
}

export const SocialProviderSchema = new EntitySchema<SocialProvider>({
  class: SocialProvider,
  tableName: 'social_providers',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    provider: { type: 'string' },
    config: { type: 'json' },
    secretSealed: { type: 'string', lazy: true },
    enabled: { type: 'boolean' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
