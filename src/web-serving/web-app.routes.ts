import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { Router, type Response } from 'express';
import { sendError } from '../core/envelope.ts';
import { AppError } from '../core/errors.ts';
import { escapeHtml } from '../core/html.ts';

/*
 * The dashboard and hosted pages (src/web), built by Vite into dist/web and served here: hashed
 * assets under /dashboard/assets cached for a year, and the one index.html for every client route,
 * never cached, under a strict Content-Security-Policy (scripts and styles from our origin only, no
 * inline code, Trusted Types required for script sinks).
 */

export const WEB_DIST_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

export const SPA_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // data: for the QR code of an authenticator enrollment, which the API sends as a data URI.
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
  "require-trusted-types-for 'script'",
].join('; ');

/** The client routes of src/web/app/AppRoutes.tsx: each answers the same index.html. */
export const SPA_ROUTES = ['/login', '/login/callback', '/reset-password', '/accept-invitation', '/dashboard', '/dashboard/*rest'];

const NOT_BUILT = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>
<body><main><h1>The dashboard has not been built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds it when it is missing) and reload this page.
The API, the OAuth sign-in pages and the Admin Portal work without it.</p></main></body></html>`;

function page(res: Response, status: number, html: string): void {
  res.status(status).set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-cache',
    'Content-Security-Policy': SPA_CSP,
  });
  res.end(html);
}

/**
 * The page with the origin of BASE_URL in a meta tag (`identity-service-origin`): social and SSO
 * sign-ins come back to BASE_URL's /login/callback, and a sign-in page opened at another address
 * (127.0.0.1 for localhost, a LAN address) keeps its sign-in in that address's sessionStorage, which the
 * callback cannot read. The page reads the tag to send the person to the right address instead.
 */
export function withServiceOrigin(html: string, baseUrl: string): string {
  return html.replace('</head>', `<meta name="identity-service-origin" content="${escapeHtml(new URL(baseUrl).origin)}" />\n</head>`);
}

/**
 * Whether a path under /dashboard names the built index.html as the static files would find it (they
 * decode escapes and resolve `.` and empty segments: `/%69ndex.html`, `//index.html`). An escape that
 * does not decode is left to them (a 400).
 */
function namesIndexFile(path: string): boolean {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch (error) {
    if (error instanceof URIError) return false;
    throw error;
  }
  return posix.normalize(decoded) === '/index.html';
}

export function webAppRoutes({ dir = WEB_DIST_DIR, baseUrl }: { dir?: string; baseUrl?: string } = {}): Router {
  const routes = Router();

  routes.get('/', (_req, res) => res.redirect(302, '/dashboard'));

  routes.use(
    '/dashboard/assets',
    express.static(join(dir, 'assets'), {
      index: false,
      fallthrough: true,
      immutable: true,
      maxAge: '365d',
      setHeaders: (res) => res.setHeader('Content-Security-Policy', SPA_CSP),
    }),
    // A missing asset is a 404, never the index page (a stale tab would otherwise run HTML as a script).
    (req, res) => sendError(res, new AppError('NOT_FOUND', `No asset at ${req.path}`)),
  );

  const files = express.static(dir, {
    index: false,
    // /dashboard itself is the app's page below, not a directory to redirect to /dashboard/.
    redirect: false,
    fallthrough: true,
    setHeaders: (res) => res.set({ 'Cache-Control': 'no-cache', 'Content-Security-Policy': SPA_CSP }),
  });
  routes.use('/dashboard', (req, res, next) => {
    // The app's page itself, asked for by its file name, would skip what every client route gets (the
    // BASE_URL meta tag): it is the dashboard's address under another name, so it goes there.
    if ((req.method === 'GET' || req.method === 'HEAD') && namesIndexFile(req.path)) {
      const query = req.originalUrl.indexOf('?');
      return res.redirect(302, `/dashboard${query < 0 ? '' : req.originalUrl.slice(query)}`);
    }
    return files(req, res, next);
  });

  routes.get(SPA_ROUTES, async (_req, res, next) => {
    let html: string;
    try {
      html = await readFile(join(dir, 'index.html'), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return next(error);
      return page(res, 503, NOT_BUILT);
    }
    page(res, 200, baseUrl === undefined ? html : withServiceOrigin(html, baseUrl));
  });

  return routes;
}
