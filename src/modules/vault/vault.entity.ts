import { EntitySchema } from '@mikro-orm/core';
import type { ActorType } from '../audit/audit.entity.ts';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * A stored secret. The value exists only as `ciphertext` (under a data key of its own) and
 * `wrappedKey` (that data key under the master key `keyId`); both are lazy, so no list ever loads them.
 */
export class VaultObject {
  id!: string;
  workspaceId!: string;
  name!: string;
  description!: string | null;
  ciphertext!: string;
  wrappedKey!: string;
  keyId!: string;
  createdByType!: ActorType;
  createdById!: string | null;
  createdAt!: Date;
  updatedAt!: Date;
}

export const VaultObjectSchema = new EntitySchema<VaultObject>({
  class: VaultObject,
  tableName: 'vault_objects',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string', nullable: true },
    ciphertext: { type: 'text', lazy: true },
    wrappedKey: { type: 'string', lazy: true },
    keyId: { type: 'string' },
    createdByType: { type: 'string' },
    createdById: { type: 'string', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
