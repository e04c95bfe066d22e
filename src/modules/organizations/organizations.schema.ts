import { z } from 'zod';
import { canonicalDomain } from '../../core/addresses.ts';
import { pageOf, pageParams } from '../../core/pagination.ts';
import { labelInput, searchInput } from '../../core/labels.ts';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Trimmed, then as every domain is stored (core/addresses.ts: lower case, no trailing dot, an IDN in punycode). */
export function normalizeDomain(raw: string): string {
  return canonicalDomain(raw.trim());
}

/**
 * A host name: at least two labels of letters, digits and inner hyphens, the last not all digits (a
 * top-level domain never is, so `1.2.3.4` is an address, not a name; IPv6 literals fail on their colons).
 */
function isDomainName(domain: string): boolean {
  const labels = domain.split('.');
  return domain.length <= 253 && labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^[0-9]+$/.test(labels.at(-1) ?? '');
}

export const domainInput = z.string().max(253).transform(normalizeDomain).refine(isDomainName, 'must be a domain name such as example.com');

const ssoSettings = z.strictObject({
  enabled: z.boolean().optional(),
  jit_provisioning: z.boolean().optional(),
  default_role: z.string().min(1).max(50).optional(),
});

export const createOrganizationInput = z.strictObject({
  name: labelInput(100),
  domains: z.array(domainInput).max(50).default([]),
  sso: ssoSettings.optional(),
});
export type CreateOrganizationInput = z.infer<typeof createOrganizationInput>;

export const updateOrganizationInput = z.strictObject({
  id: z.string().max(100),
  name: labelInput(100).optional(),
  domains: z.array(domainInput).max(50).optional(),
  sso: ssoSettings.optional(),
});
export type UpdateOrganizationInput = z.infer<typeof updateOrganizationInput>;

export const organizationIdInput = z.object({ id: z.string().max(100) });
export const listOrganizationsInput = z.object({ q: searchInput.optional(), ...pageParams }).prefault({});

export const organizationOutput = z
  .object({
    id: z.string(),
    name: z.string(),
    domains: z.array(z.string()),
    sso: z.object({ enabled: z.boolean(), jit_provisioning: z.boolean(), default_role: z.string() }),
    connection: z.object({ kind: z.enum(['oidc', 'saml']), active: z.boolean() }).nullable(),
    member_count: z.number().int(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });
export type OrganizationView = z.infer<typeof organizationOutput>;
export const organizationPage = pageOf(organizationOutput);

export const listMembersInput = z.object({ id: z.string().max(100), ...pageParams });
export const addMemberInput = z.strictObject({ id: z.string().max(100), user_id: z.string().max(100) });
export const removeMemberInput = z.object({ id: z.string().max(100), user_id: z.string().max(100) });
export const organizationMemberOutput = z
  .object({
    organization_id: z.string(),
    user_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    added_at: z.string().describe('When the user joined: their first SSO sign-in, or when an admin added them'),
  })
  .meta({ id: 'OrganizationMember' });
export type OrganizationMemberView = z.infer<typeof organizationMemberOutput>;
export const organizationMemberPage = pageOf(organizationMemberOutput);

/** `organization_id`, or WorkOS's spelling `organization` (with its `intent`, which can only be `sso` here). */
export const portalLinkInput = z
  .strictObject({
    organization_id: z.string().max(100).optional(),
    organization: z.string().max(100).optional(),
    intent: z.literal('sso').optional(),
  })
  .refine((v) => (v.organization_id === undefined) !== (v.organization === undefined), {
    message: 'send organization_id',
    path: ['organization_id'],
  })
  .transform((v) => ({ organization_id: (v.organization_id ?? v.organization) as string }));
export const portalLinkOutput = z.object({ link: z.string(), expires_at: z.string() }).meta({ id: 'PortalLink' });

/**
 * An organization's SSO connection. Until its IT admin submits one through the Admin Portal, `id` and
 * `kind` are null (nothing submitted yet), and `service_provider` already holds the values their
 * identity provider will need.
 */
export const ssoConnectionOutput = z
  .object({
    id: z.string().nullable(),
    organization_id: z.string(),
    kind: z.enum(['oidc', 'saml']).nullable(),
    active: z.boolean(),
    oidc: z.object({ issuer: z.string(), client_id: z.string(), client_secret: z.string(), scopes: z.array(z.string()) }).nullable(),
    saml: z
      .object({
        entity_id: z.string(),
        sso_url: z.string(),
        certificate_fingerprints: z.array(z.string()),
        metadata_url: z.string().nullable(),
      })
      .nullable(),
    service_provider: z.object({ entity_id: z.string(), acs_url: z.string(), metadata_url: z.string(), redirect_uri: z.string() }),
    created_at: z.string().nullable(),
    updated_at: z.string().nullable(),
  })
  .meta({ id: 'SsoConnection' });
export type SsoConnectionView = z.infer<typeof ssoConnectionOutput>;
