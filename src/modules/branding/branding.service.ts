import type { EntityManager } from '@mikro-orm/postgresql';
import { recordAudit, type AuditScope } from '../../core/audit.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { Branding } from './branding.entity.ts';
import type { BrandingView, UpdateBrandingInput } from './branding.schema.ts';

/** The hosted pages' own colors, so a workspace that never set any looks as before. */
export const DEFAULT_PRIMARY_COLOR = '#2457d6';
export const DEFAULT_BACKGROUND_COLOR = '#f4f5f7';

const FIELDS = {
  name: 'name',
  logo_url: 'logoUrl',
  primary_color: 'primaryColor',
  background_color: 'backgroundColor',
  support_email: 'supportEmail',
} as const satisfies Record<keyof UpdateBrandingInput, keyof Branding>;

function toView(workspace: Workspace, row: Branding | null): BrandingView {
  return {
    name: row?.name ?? workspace.name,
    logo_url: row?.logoUrl ?? null,
    primary_color: row?.primaryColor ?? DEFAULT_PRIMARY_COLOR,
    background_color: row?.backgroundColor ?? DEFAULT_BACKGROUND_COLOR,
    support_email: row?.supportEmail ?? null,
    customized: !!row && Object.values(FIELDS).some((field) => row[field] !== null),
    updated_at: row?.updatedAt.toISOString() ?? null,
  };
}

/**
 * A workspace's branding with every default filled in (given the workspace, or its id). Safe to
 * call from anywhere that knows the workspace (hosted pages, the mail path): it is named explicitly,
 * so the tenant filter is not needed.
 */
export async function brandingOf(em: EntityManager, workspace: Workspace | string): Promise<BrandingView> {
  const found = typeof workspace === 'string' ? await em.findOneOrFail(Workspace, { id: workspace }) : workspace;
  return toView(found, await em.findOne(Branding, { workspaceId: found.id }, { filters: false }));
}

/** Sets the given fields (`null` puts a default back); a request that changes nothing writes nothing. */
export async function updateBranding(scope: AuditScope, input: UpdateBrandingInput, now: Date): Promise<BrandingView> {
  const { em, workspaceId } = scope;
  const workspace = await em.findOneOrFail(Workspace, { id: workspaceId });
  const existing = await em.findOne(Branding, { workspaceId });
  const row =
    existing ??
    Object.assign(new Branding(), {
      workspaceId,
      name: null,
      logoUrl: null,
      primaryColor: null,
      backgroundColor: null,
      supportEmail: null,
      updatedAt: now,
    });
  const changes: Record<string, { from: string | null; to: string | null }> = {};
  for (const key of Object.keys(FIELDS) as (keyof typeof FIELDS)[]) {
    const field = FIELDS[key];
    const value = input[key];
    if (value === undefined || value === row[field]) continue;
    changes[key] = { from: row[field], to: value };
    row[field] = value;
  }
  if (Object.keys(changes).length === 0) return toView(workspace, existing);
  row.updatedAt = now;
  if (!existing) em.persist(row);
  recordAudit(scope, { eventType: 'branding.update', target: { type: 'branding', id: workspaceId }, details: changes });
  return toView(workspace, row);
}
