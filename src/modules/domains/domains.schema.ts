import { z } from 'zod';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { domainInput } from '../organizations/organizations.schema.ts';

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;

export const createDomainInput = z.strictObject({ domain: domainInput });
export const domainIdInput = z.object({ id: z.string().max(100) });
export const listDomainsInput = z.object({ status: z.enum(DOMAIN_STATUSES).optional(), ...pageParams }).prefault({});

export const domainOutput = z
  .object({
    id: z.string(),
    domain: z.string(),
    status: z.enum(DOMAIN_STATUSES),
    verification: z
      .object({ type: z.literal('TXT'), name: z.string(), value: z.string() })
      .describe('Publish this TXT record, then call verify; keep it published while the domain is used'),
    failure_reason: z.string().nullable().describe('Why the last check failed; null unless status is failed'),
    checked_at: z.string().nullable(),
    verified_at: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'CustomDomain' });
export type DomainView = z.infer<typeof domainOutput>;
export const domainPage = pageOf(domainOutput);
