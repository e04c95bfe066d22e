import type { EntityManager } from '@mikro-orm/postgresql';
import type { Workspace } from '../workspaces/workspace.entity.ts';
import { brandingOf } from './branding.service.ts';
import type { BrandingView } from './branding.schema.ts';

/**
 * Branding for the server-rendered hosted pages (the OAuth sign-in, the Admin Portal). Their CSPs
 * forbid inline styles and scripts, so colors arrive in a stylesheet from our own origin
 * (`style-src 'self'`) and the logo is an `<img>` whose origin alone is added to `img-src`.
 */
export interface HostedBranding {
  /** The name to show: the branding's, else the workspace's. */
  name: string;
  /** An https URL, or null for no logo. */
  logoUrl: string | null;
  /** Path of the workspace's stylesheet, versioned by the last change so caches turn over. */
  stylesheet: string;
}

export const BRANDING_STYLESHEET_PATH = '/branding/:workspaceId/hosted.css';

export function stylesheetPathOf(workspaceId: string, view: BrandingView): string {
  const version = view.updated_at ? Date.parse(view.updated_at).toString(36) : '0';
  return `/branding/${workspaceId}/hosted.css?v=${version}`;
}

export async function hostedBranding(em: EntityManager, workspace: Workspace | string): Promise<HostedBranding> {
  const view = await brandingOf(em, workspace);
  const id = typeof workspace === 'string' ? workspace : workspace.id;
  return { name: view.name, logoUrl: view.logo_url, stylesheet: stylesheetPathOf(id, view) };
}

function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Dark or white text, whichever contrasts more with `hex` (WCAG relative luminance). */
export function textColorOn(hex: string): string {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? '#1d2330' : '#ffffff';
}

/**
 * The workspace's stylesheet. Colors were validated as `#rrggbb` when saved, so nothing a caller
 * sent can break out of a declaration.
 */
export function brandingStylesheet(view: BrandingView): string {
  const primary = view.primary_color;
  const background = view.background_color;
  return `:root{--brand-primary:${primary};--brand-on-primary:${textColorOn(primary)};--brand-background:${background};--brand-on-background:${textColorOn(background)}}
body{background:var(--brand-background);color:var(--brand-on-background)}
a{color:var(--brand-primary)}
button{background:var(--brand-primary);color:var(--brand-on-primary)}
button.secondary{background:transparent;color:var(--brand-primary);border-color:var(--brand-primary)}
.brand-logo{display:block;max-width:100%;max-height:3rem;margin:0 0 1rem}
`;
}

/** `csp` with the logo's origin (and only it) added to `img-src`; unchanged without a logo. */
export function allowLogo(csp: string, logoUrl: string | null): string {
  if (!logoUrl) return csp;
  const origin = new URL(logoUrl).origin;
  return csp
    .split(';')
    .map((directive) => (directive.trim().startsWith('img-src ') ? `${directive} ${origin}` : directive))
    .join(';');
}
