import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';

describe('OPTIONS on the OAuth and discovery endpoints', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it.each([
    ['/oauth/token', 'POST, OPTIONS'],
    ['/oauth/userinfo', 'GET, HEAD, POST, OPTIONS'],
    ['/oauth/revoke', 'POST, OPTIONS'],
    ['/oauth/introspect', 'POST, OPTIONS'],
    ['/.well-known/openid-configuration', 'GET, HEAD, OPTIONS'],
  ])('a plain OPTIONS %s is 204 with the Allow its 405 names, not a bare 404', async (path, allow) => {
    const options = await call(app, 'OPTIONS', path);
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe(allow);
    expect(options.headers.get('x-request-id')).toBeTruthy();
    const wrong = await call(app, 'DELETE', path);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe(allow);
  });

  it('a CORS preflight is still oidc-provider’s, with the methods a browser may use', async () => {
    const preflight = await call(app, 'OPTIONS', '/oauth/token', {
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
  });
});
