import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { Browser } from '../../../test/helpers/browser.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { textColorOn } from './hosted.ts';

const LOGO = 'https://cdn.brand.example/logo.png';

describe('branding', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'Brand Co');
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const roleId = (key: string) => roles.body.data.find((r: { key: string }) => r.key === key).id as string;
    const custom = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: 'Brand editor', permissions: ['branding:read', 'branding:write'] },
    });
    for (const role of ['admin', 'viewer', 'member', 'editor']) {
      const email = uniqueEmail(role);
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'branding passphrase' } });
      const id = role === 'editor' ? custom.body.data.id : role === 'member' ? null : roleId(role);
      if (id) await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: id } });
      tokens[role] = (await signIn(app, ws.id, email, 'branding passphrase')).accessToken;
    }
    tokens.owner = (await signIn(app, ws.id, ws.owner.email, ws.owner.password)).accessToken;
  });
  afterAll(() => app.close());

  const get = (token = ws.apiKey) => call(app, 'GET', '/api/v1/branding', { token });
  const patch = (body: unknown, token = ws.apiKey) => call(app, 'PATCH', '/api/v1/branding', { token, body });

  it('has defaults before anything is set: the workspace name, the built-in colors, no logo', async () => {
    const other = await createWorkspace(app, 'Never Branded');
    const res = await get(other.apiKey);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      name: 'Never Branded',
      logo_url: null,
      primary_color: '#2457d6',
      background_color: '#f4f5f7',
      support_email: null,
      customized: false,
      updated_at: null,
    });
  });

  it('updates the given fields only, records an audit row, and puts defaults back with null', async () => {
    const res = await patch({ name: 'Brand', logo_url: LOGO, primary_color: '#AA0011', support_email: 'help@brand.example' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: 'Brand',
      logo_url: LOGO,
      primary_color: '#AA0011',
      background_color: '#f4f5f7',
      support_email: 'help@brand.example',
      customized: true,
    });
    expect((await get()).body.data).toEqual(res.body.data);

    const partial = await patch({ background_color: '#101820' });
    expect(partial.body.data).toMatchObject({ name: 'Brand', primary_color: '#AA0011', background_color: '#101820' });

    const [audit] = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute<{ details: any }[]>(
        `select details from audit_events where workspace_id = ? and event_type = 'branding.update' order by id limit 1`,
        [ws.id],
      );
    expect(audit?.details.name).toEqual({ from: null, to: 'Brand' });

    const reset = await patch({ name: null, primary_color: null });
    expect(reset.body.data).toMatchObject({ name: 'Brand Co', primary_color: '#2457d6', logo_url: LOGO, customized: true });
  });

  it.each([
    ['a color without #', { primary_color: 'aa0011' }, 'primary_color'],
    ['a short color', { background_color: '#abc' }, 'background_color'],
    ['a CSS injection in a color', { primary_color: '#aa0011;}body{display:none' }, 'primary_color'],
    ['an http logo', { logo_url: 'http://cdn.brand.example/logo.png' }, 'logo_url'],
    ['a javascript: logo', { logo_url: 'javascript:alert(1)' }, 'logo_url'],
    ['a logo on an IP address', { logo_url: 'https://10.0.0.1/logo.png' }, 'logo_url'],
    ['a logo URL with credentials', { logo_url: 'https://user:pw@cdn.brand.example/logo.png' }, 'logo_url'],
    ['a bad support email', { support_email: 'not an email' }, 'support_email'],
    ['an empty name', { name: '   ' }, 'name'],
    ['an unknown field', { font: 'Comic Sans' }, 'font'],
  ])('refuses %s with 400 and the field, named once', async (_label, body, path) => {
    const res = await patch(body);
    expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([path]);
  });

  it('lets owners, admins, API keys and a role with branding:write change it; viewers only read; members neither', async () => {
    for (const who of ['owner', 'admin', 'editor']) {
      expect((await patch({ support_email: `${who}@brand.example` }, tokens[who])).status, who).toBe(200);
    }
    expect((await get(tokens.viewer)).status).toBe(200);
    expect((await patch({ name: 'Viewer' }, tokens.viewer)).status).toBe(403);
    expect((await get(tokens.member)).status).toBe(403);
    expect((await patch({ name: 'Member' }, tokens.member)).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/branding')).status).toBe(401);
  });

  it('keeps each workspace’s branding its own', async () => {
    const other = await createWorkspace(app, 'Other Brand');
    await patch({ name: 'Mine only' });
    expect((await get(other.apiKey)).body.data.name).toBe('Other Brand');
    await patch({ name: 'Theirs' }, other.apiKey);
    expect((await get()).body.data.name).toBe('Mine only');
  });

  it('serves the workspace’s colors as a stylesheet from our origin', async () => {
    await patch({ primary_color: '#ffcc00', background_color: '#101820' });
    const res = await fetch(`${app.url}/branding/${ws.id}/hosted.css`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/css/);
    const css = await res.text();
    expect(css).toContain('--brand-primary:#ffcc00');
    expect(css).toContain('--brand-background:#101820');
    // Readable text on each: dark on yellow, white on near-black.
    expect(css).toContain(`--brand-on-primary:${textColorOn('#ffcc00')}`);
    expect(textColorOn('#ffcc00')).toBe('#1d2330');
    expect(textColorOn('#101820')).toBe('#ffffff');
    expect((await fetch(`${app.url}/branding/wsp_00000000000000000000000000/hosted.css`)).status).toBe(404);
    expect((await fetch(`${app.url}/branding/nonsense/hosted.css`)).status).toBe(404);
  });

  it('shows the name and logo on the Admin Portal, with a CSP that allows the logo’s origin only', async () => {
    await patch({ name: 'Portal Brand', logo_url: LOGO });
    const org = await call(app, 'POST', '/api/v1/organizations', { token: ws.apiKey, body: { name: 'Customer', domains: [] } });
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', {
      token: ws.apiKey,
      body: { organization_id: org.body.data.id },
    });
    const url = new URL(link.body.data.link);
    const opened = await call(app, 'GET', `${url.pathname}${url.search}`);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const page = await call(app, 'GET', '/portal/sso', { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.body).toContain('<p class="brand-name">Portal Brand</p>');
    expect(page.body).toContain(`<img class="brand-logo" src="${LOGO}" alt="">`);
    expect(page.body).toMatch(new RegExp(`<link rel="stylesheet" href="/branding/${ws.id}/hosted.css\\?v=[0-9a-z]+">`));
    expect(page.body).not.toMatch(/<script|style=/);
    const csp = page.headers.get('content-security-policy') as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("img-src 'self' data: https://cdn.brand.example;");
    expect(csp).toContain("style-src 'self'");
  });

  it('shows the name, logo and stylesheet on the OAuth sign-in page', async () => {
    await patch({ name: 'OAuth Brand', logo_url: LOGO });
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Branded app', type: 'web', redirect_uris: ['https://rp.brand.example/callback'] },
    });
    const params = new URLSearchParams({
      client_id: created.body.data.id,
      response_type: 'code',
      redirect_uri: 'https://rp.brand.example/callback',
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const page = await new Browser(app.url).go(`${app.url}/oauth/authorize?${params.toString()}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Branded app · OAuth Brand');
    expect(page.body).toContain(`<img class="brand-logo" src="${LOGO}" alt="">`);
    expect(page.body).toContain(`/branding/${ws.id}/hosted.css?v=`);
    expect(page.body).not.toMatch(/<script|style=/);
    expect(page.headers.get('content-security-policy')).toContain("img-src 'self' data: https://cdn.brand.example;");

    await patch({ logo_url: null });
    const plain = await new Browser(app.url).go(`${app.url}/oauth/authorize?${params.toString()}`);
    expect(plain.body).not.toContain('brand-logo');
    expect(plain.headers.get('content-security-policy')).toContain("img-src 'self' data:;");
  });
});
