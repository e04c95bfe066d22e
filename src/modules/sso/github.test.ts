import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/**
 * GitHub is plain OAuth 2.0: no discovery, no id_token; the profile and the verified primary email
 * come from its REST API. A GitHub Enterprise-shaped server in-process plays it (the preset's
 * endpoints under `github_base_url`), checking what the real one checks: the client secret and the code.
 */
describe('social sign-in with the GitHub preset', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let github: Server;
  let githubUrl: string;
  let emails: { email: string; primary: boolean; verified: boolean }[] = [];
  const issued = new Map<string, string>();

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_IDP_TARGETS: 'true' });
    ws = await createWorkspace(app, 'GitHub');
    github = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://github.test');
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === '/login/oauth/authorize') {
        const code = `code-${issued.size}`;
        issued.set(code, url.searchParams.get('code_challenge') ?? '');
        const back = new URL(url.searchParams.get('redirect_uri') as string);
        back.searchParams.set('code', code);
        back.searchParams.set('state', url.searchParams.get('state') as string);
        res.writeHead(302, { location: back.href });
        res.end();
        return;
      }
      if (url.pathname === '/login/oauth/access_token') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString()));
        req.on('end', () => {
          const form = new URLSearchParams(body);
          if (form.get('client_secret') !== 'gh-secret' || !issued.delete(form.get('code') ?? ''))
            return json(401, { error: 'bad_verification_code' });
          json(200, { access_token: 'gho_test', token_type: 'bearer', scope: 'read:user,user:email' });
        });
        return;
      }
      if (req.headers.authorization !== 'Bearer gho_test') return json(401, { message: 'Bad credentials' });
      if (url.pathname === '/api/v3/user')
        return json(200, { id: 4242, login: 'octocat', name: 'The Octocat', avatar_url: 'https://a.example/o.png' });
      if (url.pathname === '/api/v3/user/emails') return json(200, emails);
      json(404, { message: 'Not Found' });
    });
    await new Promise<void>((resolve) => github.listen(0, '127.0.0.1', resolve));
    githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
    const put = await call(app, 'PUT', '/api/v1/auth/oauth/providers/github', {
      token: ws.apiKey,
      body: { client_id: 'gh-client', client_secret: 'gh-secret', github_base_url: githubUrl },
    });
    expect(put.status).toBe(201);
    expect(put.body.data).toMatchObject({ provider: 'github', display_name: 'GitHub', scopes: ['read:user', 'user:email'] });
  });
  afterAll(async () => {
    github.closeAllConnections();
    await new Promise<void>((resolve) => github.close(() => resolve()));
    await app.close();
  });

  async function signInThroughGitHub() {
    const start = await call(app, 'GET', `/api/v1/auth/oauth/github/start?workspace_id=${ws.id}`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location') as string);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${githubUrl}/login/oauth/authorize`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const atGitHub = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(atGitHub.headers.get('location') as string);
    const back = await call(app, 'GET', `${callback.pathname}${callback.search}`);
    expect(back.status).toBe(303);
    return new URL(back.headers.get('location') as string);
  }

  it('signs in with the primary verified email from the API', async () => {
    const email = uniqueEmail('octo');
    emails = [
      { email: 'old@example.com', primary: false, verified: false },
      { email, primary: true, verified: true },
    ];
    const location = await signInThroughGitHub();
    const exchanged = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code: location.searchParams.get('code') } });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.data.user).toMatchObject({ email, name: 'The Octocat', email_verified: true });
  });

  it('refuses an account without a verified email', async () => {
    emails = [{ email: uniqueEmail('unverified'), primary: true, verified: false }];
    const location = await signInThroughGitHub();
    expect(location.searchParams.get('error')).toBe('access_denied');
  });
});
