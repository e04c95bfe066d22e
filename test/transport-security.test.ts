import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';

/**
 * A service reached over https tells browsers to never use plain http for it again (HSTS), on every
 * kind of answer: hosted pages, the API (refusals too), the protocol endpoints, unknown paths.
 */
const PATHS = ['/login', '/api/v1/users', '/.well-known/jwks.json', '/healthz', '/no-such-page'];

describe('Strict-Transport-Security', () => {
  let secure: TestApp;
  let plain: TestApp;
  beforeAll(async () => {
    secure = await startTestApp({ BASE_URL: 'https://id.example.test' });
    plain = await startTestApp();
  });
  afterAll(async () => {
    await secure.close();
    await plain.close();
  });

  it.each(PATHS)('is sent on %s when BASE_URL is https', async (path) => {
    const res = await call(secure, 'GET', path);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });

  it('is not sent when BASE_URL is http (local development)', async () => {
    for (const path of PATHS) {
      const res = await call(plain, 'GET', path);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('strict-transport-security'), path).toBeNull();
    }
  });
});
