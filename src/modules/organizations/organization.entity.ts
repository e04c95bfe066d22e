import { EntitySchema } from '@mikro-orm/core';
import { tenantFilters } from '../../db/tenant.ts';

/** How an organization's members sign in through its identity provider. */
export interface SsoSettings {
  /** SSO sign-in is offered for the organization's domains once a connection exists. */
  enabled: boolean;
  /** Unknown users arriving through SSO are created on the spot. */
  jit_provisioning: boolean;
  /** The role given to users created by SSO (a role key of the workspace). */
  default_role: string;
}

/** A customer company inside a workspace: its email domains, members and SSO connection. */
export class Organization {
  id!: string;
  workspaceId!: string;
  name!: string;
  sso!: SsoSettings;
  createdAt!: Date;
  updatedAt!: Date;
}

export const OrganizationSchema = new EntitySchema<Organization>({
  class: Organization,
  tableName: 'organizations',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    sso: { type: 'json' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', columnType: 'timestamptz' },
  },
});

/** A domain belongs to at most one organization of a workspace (unique index). */
export class OrganizationDomain {
  id!: string;
  workspaceId!: string;
  organizationId!: string;
  domain!: string;
}

export const OrganizationDomainSchema = new EntitySchema<OrganizationDomain>({
  class: OrganizationDomain,
  tableName: 'organization_domains',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    organizationId: { type: 'string' },
    domain: { type: 'string' },
  },
});

export class OrganizationMember {
  id!: string;
  workspaceId!: string;
  organizationId!: string;
  userId!: string;
  createdAt!: Date;
}

export const OrganizationMemberSchema = new EntitySchema<OrganizationMember>({
  class: OrganizationMember,
  tableName: 'organization_members',
  filters: tenantFilters,
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string' },
    organizationId: { type: 'string' },
    userId: { type: 'string' },
    createdAt: { type: 'Date', columnType: 'timestamptz' },
  },
});
