import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** A secret API key: shown once, stored as a SHA-256 digest, acts with admin rights in its workspace. */
export class ApiKey {
  id!: string;
  workspaceId!: string;
  name!: string;
  /** The first characters of the key, so people can tell keys apart. */
  prefix!: string;
  keyHash!: string;
  createdAt!: Date;
  revokedAt!: Date | null;
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  class: ApiKey,
  tableName: 'api_keys',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    prefix: { type: 'string' },
    keyHash: { type: 'string', unique: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    revokedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
  },
});
