/**
 * Every tenant-owned entity carries this filter, on by default: a query without a workspace fails
 * loudly instead of reading across tenants. The request context sets `workspaceId` once it knows it;
 * platform code that must see all workspaces passes `filters: false` explicitly.
 */
export interface TenantFilterArgs {
  workspaceId: string;
}

export const TENANT_FILTER = 'tenant';

export const tenantFilters = {
  [TENANT_FILTER]: {
    name: TENANT_FILTER,
    cond: (args: Record<string, unknown>) => ({ workspaceId: args.workspaceId }),
    default: true,
  },
};
