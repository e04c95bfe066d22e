import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

export type DomainStatus = 'pending' | 'verified' | 'failed';

/**
 * A custom domain a workspace claims. It is `verified` while a TXT record at
 * `_identity-verify.<domain>` holds `identity-verify=<token>`; a failed check can be retried. A
 * verified domain belongs to one workspace only.
 */
export class CustomDomain {
  id!: string;
  workspaceId!: string;
  domain!: string;
  status!: DomainStatus;
  verificationToken!: string;
  failureReason!: string | null;
  checkedAt!: Date | null;
  verifiedAt!: Date | null;
  createdAt!: Date;
}

export const CustomDomainSchema = new EntitySchema<CustomDomain>({
  class: CustomDomain,
  tableName: 'custom_domains',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    domain: { type: 'string' },
    status: { type: 'string' },
    verificationToken: { type: 'string' },
    failureReason: { type: 'string', nullable: true },
    checkedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    verifiedAt: { type: 'Date', columnType: 'timestamptz', nullable: true },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
