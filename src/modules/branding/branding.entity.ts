import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/**
 * A workspace's branding: one row, written on the first change. A null field means the default
 * (the workspace's name, no logo, the built-in colors, no support address).
 */
export class Branding {
  workspaceId!: string;
  name!: string | null;
  logoUrl!: string | null;
  primaryColor!: string | null;
  backgroundColor!: string | null;
  supportEmail!: string | null;
  updatedAt!: Date;
}

export const BrandingSchema = new EntitySchema<Branding>({
  class: Branding,
  tableName: 'branding',
  filters: tenantFilters,
  properties: {
    workspaceId: { type: 'string', primary: true },
    name: { type: 'string', nullable: true },
    logoUrl: { type: 'string', nullable: true },
    primaryColor: { type: 'string', nullable: true },
    backgroundColor: { type: 'string', nullable: true },
    supportEmail: { type: 'string', nullable: true },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
