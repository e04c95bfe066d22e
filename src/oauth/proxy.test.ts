import * as oidc from 'openid-client';
import { describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/helpers/app.ts';
import { Browser, formAction, type Page } from '../../test/helpers/browser.ts';
import { call } from '../../test/helpers/http.ts';
import { createWorkspace, type TestWorkspace } from '../../test/helpers/workspace.ts';

/**
 * The sign-in cookies behind TRUST_PROXY: Secure when a trusted proxy says the browser used https,
 * never because a client sent the header itself. One app at a time: without DATABASE_URL the tests
 * share a single-connection embedded database.
 */
/** A web application of the workspace, and the query of an authorization request for it. */
async function authorizationRequest(app: TestApp, ws: TestWorkspace): Promise<URLSearchParams> {
  const created = await call(app, 'POST', '/api/v1/applications', {
    token: ws.apiKey,
    body: { name: 'Proxied', type: 'web', redirect_uris: ['https://rp.example.com/cb'] },
  });
  return new URLSearchParams({
    client_id: created.body.data.id,
    response_type: 'code',
    redirect_uri: 'https://rp.example.com/cb',
    scope: 'openid',
    code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
  });
}

describe('authorization server behind a proxy', () => {
  it.each([
    ['loopback (trusted)', true, { TRUST_PROXY: 'loopback' }],
    ['unset (spoofed header)', false, { TRUST_PROXY: '' }],
  ])('with TRUST_PROXY %s, X-Forwarded-Proto: https gives Secure cookies: %s', async (_label, secure, env) => {
    const app = await startTestApp(env);
    try {
      const ws = await createWorkspace(app);
      const params = await authorizationRequest(app, ws);
      const res = await fetch(`${app.url}/oauth/authorize?${params}`, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
      expect(res.status).toBe(303);
      expect(new URL(res.headers.get('location') as string, app.url).pathname).toMatch(/^\/oauth\/interaction\//);
      const cookies = res.headers.getSetCookie();
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies) expect(cookie.toLowerCase().includes('; secure')).toBe(secure);
    } finally {
      await app.close();
    }
  });

  it.each([
    ['https through a trusted proxy', 'samesite=none', { 'x-forwarded-proto': 'https' }],
    ['plain http', 'samesite=lax', {}],
  ])('the browser session cookie over %s is %s', async (_label, sameSite, headers) => {
    const app = await startTestApp({ TRUST_PROXY: 'loopback' });
    try {
      const ws = await createWorkspace(app);
      const params = await authorizationRequest(app, ws);
      // Behind the proxy the server's redirects name https: the proxy's side of this same server.
      const browser = new Browser(app.url, undefined, headers);
      const follow = async (page: Page & { location?: string }) => {
        const cookies = page.headers.getSetCookie();
        while (page.location?.startsWith(app.url.replace('http:', 'https:'))) {
          page = await browser.go(page.location.replace('https:', 'http:'));
          cookies.push(...page.headers.getSetCookie());
        }
        return { page, cookies };
      };
      const { page: login } = await follow(await browser.go(`${app.url}/oauth/authorize?${params}`));
      const signIn = formAction(login.body, 'Sign in').replace('https:', 'http:');
      const done = await follow(await browser.go(signIn, { email: ws.owner.email, password: ws.owner.password }));
      expect(new URL(done.page.location as string).searchParams.get('code')).toBeTruthy();
      const session = done.cookies.find((c) => c.startsWith('_session='))?.toLowerCase();
      expect(session).toContain(sameSite);
      expect(session?.includes('; secure')).toBe(sameSite === 'samesite=none');
    } finally {
      await app.close();
    }
  });
});
