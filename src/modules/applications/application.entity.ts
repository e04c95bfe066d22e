import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * `web`: a server-side app that keeps a secret (authorization code, refresh token);
 * `spa` and `native`: public clients, no secret, PKCE required;
 * `m2m`: a backend calling APIs as itself (client credentials).
 */
export const APPLICATION_TYPES = ['web', 'spa', 'native', 'm2m'] as const;
export type ApplicationType = (typeof APPLICATION_TYPES)[number];

/** Types that authenticate with a client secret. */
export const CONFIDENTIAL_TYPES: readonly ApplicationType[] = ['web', 'm2m'];

export function isConfidential(type: ApplicationType): boolean {
  return CONFIDENTIAL_TYPES.includes(type);
}

/** An OAuth client of a workspace; its id is the `client_id`. The secret is stored as a SHA-256 digest. */
export class Application {
  id!: string;
  workspaceId!: string;
  name!: string;
  type!: ApplicationType;
  redirectUris!: string[];
  /** Where RP-initiated logout may send people back to (`post_logout_redirect_uri`), matched exactly. */
  postLogoutRedirectUris!: string[];
  secretHash!: string | null;
  /** The first characters of the secret, so people can tell secrets apart. */
  secretPrefix!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
  secretRotatedAt!: Date | null;
}

export const ApplicationSchema = new EntitySchema<Application>({
  class: Application,
  tableName: 'applications',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    type: { type: 'string' },
    redirectUris: { type: 'json' },
    postLogoutRedirectUris: { type: 'json' },
    secretHash: { type: 'string', nullable: true, lazy: true },
    secretPrefix: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
    secretRotatedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
