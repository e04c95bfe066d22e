import { escapeHtml } from '../../core/html.ts';
/**
 * Server-rendered pages of the Admin Portal: no scripts, no inline styles (a strict CSP allows neither).
 * Pages of a known workspace carry its branding: its stylesheet (our origin) and logo (whose origin
 * the route adds to `img-src`, branding/hosted.ts).
 */

export const PORTAL_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The workspace's name, logo and stylesheet (see branding/hosted.ts). */
export interface PortalBrand {
  name: string;
  logoUrl: string | null;
  stylesheet: string;
}

export function page(title: string, body: string, brand?: PortalBrand): string {
  const stylesheet = brand ? `\n<link rel="stylesheet" href="${escapeHtml(brand.stylesheet)}">` : '';
  const logo = brand?.logoUrl ? `<img class="brand-logo" src="${escapeHtml(brand.logoUrl)}" alt="">\n` : '';
  const header = brand ? `${logo}<p class="brand-name">${escapeHtml(brand.name)}</p>\n` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>${stylesheet}
</head>
<body>
<main>
${header}<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>`;
}

export function notice(kind: 'error' | 'success', message: string): string {
  return `<p role="${kind === 'error' ? 'alert' : 'status'}" class="${kind}">${escapeHtml(message)}</p>`;
}

export interface PortalView {
  organization: string;
  current: string | null;
  serviceProvider: { entity_id: string; acs_url: string; metadata_url: string; redirect_uri: string };
  values?: Record<string, string>;
  brand?: PortalBrand;
}

function field(name: string, label: string, value = '', type = 'text', extra = ''): string {
  return `<p><label for="${name}">${escapeHtml(label)}</label><br><input id="${name}" name="${name}" type="${type}" value="${escapeHtml(value)}" ${extra}></p>`;
}

export function portalPage(view: PortalView, message = ''): string {
  const sp = view.serviceProvider;
  const v = view.values ?? {};
  return page(
    `Single sign-on for ${view.organization}`,
    `${message}
<p>${view.current ? `Current connection: ${escapeHtml(view.current)}.` : 'No connection is configured yet.'} Saving tests the connection first; nothing is saved if the test fails.</p>
<section aria-labelledby="oidc">
<h2 id="oidc">OpenID Connect</h2>
<p>Register this redirect URI at your identity provider: <code>${escapeHtml(sp.redirect_uri)}</code></p>
<form method="post" action="/portal/sso/oidc">
${field('issuer', 'Issuer URL', v.issuer, 'url', 'required autocomplete="off"')}
${field('client_id', 'Client ID', v.client_id, 'text', 'required autocomplete="off"')}
${field('client_secret', 'Client secret', '', 'password', 'required autocomplete="off"')}
<p><button type="submit">Test and save OpenID Connect</button></p>
</form>
</section>
<section aria-labelledby="saml">
<h2 id="saml">SAML 2.0</h2>
<dl>
<dt>ACS URL</dt><dd><code>${escapeHtml(sp.acs_url)}</code></dd>
<dt>Entity ID</dt><dd><code>${escapeHtml(sp.entity_id)}</code></dd>
<dt>Service provider metadata</dt><dd><a href="${escapeHtml(sp.metadata_url)}">${escapeHtml(sp.metadata_url)}</a></dd>
</dl>
<form method="post" action="/portal/sso/saml">
${field('metadata_url', 'Identity provider metadata URL', v.metadata_url, 'url', 'autocomplete="off"')}
<p><label for="metadata_xml">Or paste the metadata XML</label><br><textarea id="metadata_xml" name="metadata_xml" rows="8" cols="80"></textarea></p>
<p><button type="submit">Test and save SAML</button></p>
</form>
</section>`,
    view.brand,
  );
}
