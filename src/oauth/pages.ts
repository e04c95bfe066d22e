import { escapeHtml } from '../core/html.ts';
/**
 * The hosted pages of the authorization server: plain server-rendered HTML forms, no script at all,
 * stylesheets from our own origin only (ours, then the workspace's branding), so the CSP below can
 * forbid everything else. A workspace logo adds its origin to `img-src` (branding/hosted.ts).
 */

/** For every hosted page. No `form-action`: browsers apply it to the redirects after a submit, which end at the client. */
export const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

export const STYLESHEET_PATH = '/oauth/assets/hosted.css';

export const STYLESHEET = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1d2330}
main{max-width:24rem;margin:8vh auto;padding:2rem;background:#fff;color:#1d2330;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 .25rem}
.workspace{margin:0 0 1.5rem;color:#5b6475}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid #aab1bf;border-radius:8px}
input:focus{outline:3px solid #8db3ff;outline-offset:1px;border-color:#2457d6}
.hint{font-size:.875rem;color:#5b6475;margin:.25rem 0 0}
button{width:100%;margin-top:1.5rem;padding:.7rem;font:inherit;font-weight:600;border:0;border-radius:8px;background:#2457d6;color:#fff;cursor:pointer}
button.secondary{margin-top:.75rem;background:transparent;color:#2457d6;border:1px solid #2457d6}
.error{margin:0 0 1rem;padding:.75rem;border-radius:8px;background:#fdecec;color:#8a1111}
`;

function page(title: string, body: string, stylesheet?: string): string {
  const branded = stylesheet ? `\n<link rel="stylesheet" href="${escapeHtml(stylesheet)}">` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">${branded}
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

export interface Branding {
  /** The application the user is signing in to. */
  applicationName: string;
  /** The workspace's brand name (its branding's, else the workspace's name). */
  workspaceName: string;
  /** The workspace's logo (https), shown above the heading. */
  logoUrl?: string | null;
  /** The workspace's branding stylesheet (its colors), a path on our origin. */
  stylesheet?: string;
}

function heading(title: string, branding: Branding): string {
  // Decorative: the brand name is written right below it.
  const logo = branding.logoUrl ? `<img class="brand-logo" src="${escapeHtml(branding.logoUrl)}" alt="">\n` : '';
  return `${logo}<h1>${escapeHtml(title)}</h1>
<p class="workspace">${escapeHtml(branding.applicationName)} · ${escapeHtml(branding.workspaceName)}</p>`;
}

function errorBox(error: string | undefined): string {
  return error ? `<p class="error" role="alert" id="form-error">${escapeHtml(error)}</p>` : '';
}

function cancelForm(action: string): string {
  return `<form method="post" action="${escapeHtml(action)}">
<button type="submit" class="secondary">Cancel</button>
</form>`;
}

export function signInPage(input: { action: string; abort: string; branding: Branding; email?: string; error?: string }): string {
  const described = input.error ? ' aria-describedby="form-error"' : '';
  return page(
    `Sign in to ${input.branding.applicationName}`,
    `${heading(`Sign in to ${input.branding.applicationName}`, input.branding)}
${errorBox(input.error)}
<form method="post" action="${escapeHtml(input.action)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required autofocus value="${escapeHtml(input.email ?? '')}"${described}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="128">
<button type="submit">Sign in</button>
</form>
${cancelForm(input.abort)}`,
    input.branding.stylesheet,
  );
}

/** `email`: the address the password was given for, sent back with the code (the sign-in page, should the step end, shows it). */
export function totpPage(input: {
  action: string;
  abort: string;
  branding: Branding;
  mfaToken: string;
  email: string;
  error?: string;
}): string {
  const described = input.error ? 'code-hint form-error' : 'code-hint';
  return page(
    'Enter your authentication code',
    `${heading('Two-step verification', input.branding)}
${errorBox(input.error)}
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="mfa_token" value="${escapeHtml(input.mfaToken)}">
<input type="hidden" name="email" value="${escapeHtml(input.email)}">
<label for="code">Authentication code</label>
<input id="code" name="code" type="text" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required autofocus aria-describedby="${described}">
<p class="hint" id="code-hint">The six-digit code from your authenticator app.</p>
<button type="submit">Verify</button>
</form>
${cancelForm(input.abort)}`,
    input.branding.stylesheet,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}

/** RP-initiated logout: oidc-provider's own hidden form (`op.logoutForm`), answered by these buttons. */
export function logoutPage(form: string, clientName: string | undefined): string {
  const from = clientName ? ` from ${escapeHtml(clientName)}` : '';
  return page(
    'Sign out',
    `<h1>Sign out${from}?</h1>
${form}
<button type="submit" form="op.logoutForm" name="logout" value="yes" autofocus>Yes, sign me out</button>
<button type="submit" form="op.logoutForm" class="secondary">No, stay signed in</button>`,
  );
}
