import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * A stored attribute row: a custom attribute, or a built-in one whose switch was changed (built-ins
 * without a row are listed with their defaults).
 */
export class IdpAttribute {
  id!: string;
  workspaceId!: string;
  key!: string;
  name!: string;
  /** The claim or SAML attribute name it is read from; null for built-ins (they know their aliases). */
  claim!: string | null;
  builtin!: boolean;
  enabled!: boolean;
  createdAt!: Date;
}

export const IdpAttributeSchema = new EntitySchema<IdpAttribute>({
  class: IdpAttribute,
  tableName: 'idp_attributes',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    key: { type: 'string' },
    name: { type: 'string' },
    claim: { type: 'string', nullable: true },
    builtin: { type: 'boolean' },
    enabled: { type: 'boolean' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
