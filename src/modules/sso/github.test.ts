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
  /** What the server gets wrong: its token endpoint or its API answering as no GitHub does, down, or refusing. */
  let fault:
    'none' | 'token_page' | 'token_wrong_secret' | 'token_expired_code' | 'api_not_found' | 'api_page' | 'api_down' | 'api_rate_limit' =
    'none';
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
      if (url.pathname === '/login/oauth/access_token' && fault === 'token_page') {
        return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Page not found</h1>');
      }
      // GitHub answers its token endpoint's errors with a 200.
      if (url.pathname === '/login/oauth/access_token' && fault === 'token_wrong_secret')
        return json(200, { error: 'incorrect_client_credentials' });
      if (url.pathname === '/login/oauth/access_token' && fault === 'token_expired_code')
        return json(200, { error: 'bad_verification_code' });
      if (url.pathname.startsWith('/api/v3/') && fault === 'api_not_found') {
        return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Page not found</h1>');
      }
      if (url.pathname.startsWith('/api/v3/') && fault === 'api_page') {
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>Sign in to continue</html>');
      }
      if (url.pathname.startsWith('/api/v3/') && fault === 'api_down') return json(502, { message: 'Server Error' });
      if (url.pathname.startsWith('/api/v3/') && fault === 'api_rate_limit') {
        res.writeHead(403, { 'content-type': 'application/json', 'x-ratelimit-remaining': '0' });
        return void res.end(JSON.stringify({ message: 'API rate limit exceeded' }));
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

  it('tells the app server_error, naming it, when the GitHub host answers as no GitHub does or refuses the client; temporarily_unavailable when it is down; access_denied for an expired code', async () => {
    emails = [{ email: uniqueEmail('faulty'), primary: true, verified: true }];
    const cases: [typeof fault, string, RegExp | null][] = [
      ['token_page', 'server_error', /its token endpoint \(http:\/\/127\.0\.0\.1:\d+\/login\/oauth\/access_token\) answered HTTP 404/],
      ['token_wrong_secret', 'server_error', /refused this service's client \(incorrect_client_credentials\)/],
      ['api_not_found', 'server_error', /its API \(http:\/\/127\.0\.0\.1:\d+\/api\/v3\/user\) answered HTTP 404.*github_base_url/],
      ['api_page', 'server_error', /its API .* answered something that is not JSON/],
      ['api_down', 'temporarily_unavailable', null],
      ['api_rate_limit', 'temporarily_unavailable', null],
      ['token_expired_code', 'access_denied', null],
    ];
    try {
      for (const [which, error, problem] of cases) {
        fault = which;
        const location = await signInThroughGitHub();
        expect(location.searchParams.get('error'), which).toBe(error);
        if (problem) expect(location.searchParams.get('error_description'), which).toMatch(problem);
      }
    } finally {
      fault = 'none';
    }
  });
});
