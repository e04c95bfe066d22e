import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { requestContext } from '../core/http.ts';
import { SPA_CSP, webAppRoutes } from './web-app.routes.ts';

const INDEX = '<!doctype html><title>app</title><script type="module" src="/dashboard/assets/app-1a2b3c.js"></script>';

async function serve(dir: string, baseUrl?: string): Promise<{ url: string; server: Server }> {
  const app = express();
  app.use(requestContext);
  app.use(webAppRoutes({ dir, baseUrl }));
  app.use((_req, res) => res.status(404).end('fell through'));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('serving the built web app', () => {
  let dir: string;
  let built: { url: string; server: Server };
  let unbuilt: { url: string; server: Server };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'web-dist-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), INDEX);
    await writeFile(join(dir, 'assets', 'app-1a2b3c.js'), 'console.log(1)');
    await writeFile(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    built = await serve(dir);
    unbuilt = await serve(join(dir, 'missing'));
  });
  afterAll(async () => {
    built.server.close();
    unbuilt.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    '/dashboard',
    '/dashboard/',
    '/dashboard/users?q=ada',
    '/login',
    '/login/callback?code=x',
    '/reset-password?token=t',
    '/accept-invitation?token=t',
  ])('%s answers the app page, never cached, under the strict CSP', async (path) => {
    const res = await fetch(`${built.url}${path}`, { redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(await res.text()).toBe(INDEX);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(SPA_CSP);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
  });

  it('caches hashed assets for a year and answers a missing one with a 404, not the page', async () => {
    const asset = await fetch(`${built.url}/dashboard/assets/app-1a2b3c.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    const missing = await fetch(`${built.url}/dashboard/assets/gone-000.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('NOT_FOUND');
    const icon = await fetch(`${built.url}/dashboard/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('cache-control')).toBe('no-cache');
  });

  it('sends / to the dashboard and leaves other paths alone', async () => {
    const root = await fetch(`${built.url}/`, { redirect: 'manual' });
    expect(root.status).toBe(302);
    expect(root.headers.get('location')).toBe('/dashboard');
    expect(await (await fetch(`${built.url}/loginx`)).text()).toBe('fell through');
    expect(await (await fetch(`${built.url}/login/other`)).text()).toBe('fell through');
  });

  it('says clearly when the app has not been built', async () => {
    const res = await fetch(`${unbuilt.url}/dashboard/users`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
  });
});

describe('the app page asked for by its file name', () => {
  const HEADED = '<!doctype html><html><head><title>app</title></head><body><div id="root"></div></body></html>';
  const META = '<meta name="identity-service-origin" content="http://dash.test:3120" />';
  let dir: string;
  let served: { url: string; server: Server };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'web-dist-'));
    await writeFile(join(dir, 'index.html'), HEADED);
    served = await serve(dir, 'http://dash.test:3120/');
  });
  afterAll(async () => {
    served.server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    ['/dashboard/index.html', '/dashboard'],
    ['/dashboard/index.html?from=bookmark', '/dashboard?from=bookmark'],
    ['/dashboard/%69ndex.html', '/dashboard'],
    ['/dashboard//index.html', '/dashboard'],
    ['/DASHBOARD/index.html', '/dashboard'],
  ])('%s goes to the dashboard’s address, whose page carries the BASE_URL meta tag as every client route’s does', async (path, to) => {
    const res = await fetch(`${served.url}${path}`, { redirect: 'manual' });
    expect([res.status, res.headers.get('location')]).toEqual([302, to]);
    expect(await res.text()).not.toContain('<div id="root">');
    const head = await fetch(`${served.url}${path}`, { method: 'HEAD', redirect: 'manual' });
    expect([head.status, head.headers.get('location')]).toEqual([302, to]);

    const page = await fetch(`${served.url}${to}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(SPA_CSP);
    expect(await page.text()).toContain(META);
  });

  it('gives every client route the page with the meta tag', async () => {
    for (const path of [
      '/dashboard',
      '/dashboard/',
      '/dashboard/users',
      '/login',
      '/login/callback',
      '/reset-password',
      '/accept-invitation',
    ]) {
      expect(await (await fetch(`${served.url}${path}`)).text(), path).toContain(META);
    }
  });
});

describe('the service mounts the web app', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('answers the hosted paths with HTML under the CSP, beside the API', async () => {
    const res = await fetch(`${app.url}/reset-password?token=abc`);
    expect([200, 503]).toContain(res.status);
    expect(res.headers.get('content-security-policy')).toBe(SPA_CSP);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const api = await fetch(`${app.url}/api/v1/nothing-here`);
    expect(api.status).toBe(404);
  });
});
