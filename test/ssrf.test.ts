import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';
import { createWorkspace, type TestWorkspace } from './helpers/workspace.ts';

/**
 * Server-side request forgery through the URLs a tenant configures, with private targets not allowed
 * (ALLOW_PRIVATE_WEBHOOK_TARGETS and ALLOW_PRIVATE_IDP_TARGETS unset): IPv6 spellings that reach a
 * loopback, private or metadata address without looking like one. The module tests cover the plain
 * forms (127.0.0.1, [::1], 169.254.169.254, names that resolve to them).
 */
const DISGUISED = [
  ['NAT64 of 127.0.0.1', '[64:ff9b::7f00:1]'],
  ['NAT64 of the metadata address, dotted', '[64:ff9b::169.254.169.254]'],
  ['local-use NAT64', '[64:ff9b:1::a00:1]'],
  ['6to4 of 127.0.0.1', '[2002:7f00:1::]'],
  ['6to4 of 10.0.0.1', '[2002:a00:1::1]'],
  ['Teredo', '[2001:0:4136:e378:8000:63bf:80ff:fffe]'],
  ['site-local', '[fec0::1]'],
  ['IPv4-translated', '[::ffff:0:a9fe:a9fe]'],
  ['discard-only', '[100::1]'],
] as const;

describe('configured URLs that hide a private address in IPv6', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false', ALLOW_PRIVATE_IDP_TARGETS: 'false' });
    ws = await createWorkspace(app, 'SSRF IPv6');
  });
  afterAll(() => app.close());

  it.each(DISGUISED)('a webhook endpoint at %s is refused when saved', async (_label, host) => {
    const res = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: `https://${host}/hook` } });
    expect([res.status, res.body.error?.code, res.body.error?.details?.[0]?.path]).toEqual([400, 'BAD_REQUEST', 'url']);
  });

  it.each(DISGUISED)('an OpenID Connect issuer at %s is refused when saved', async (_label, host) => {
    const res = await call(app, 'PUT', '/api/v1/auth/oauth/providers/oidc', {
      token: ws.apiKey,
      body: { client_id: 'c', client_secret: 's', issuer: `https://${host}/realm` },
    });
    expect([res.status, res.body.error?.code, res.body.error?.details?.[0]?.path]).toEqual([400, 'BAD_REQUEST', 'issuer']);
  });

  it('still accepts the NAT64 and 6to4 forms of a public address (a DNS64 network answers those)', async () => {
    for (const host of ['[64:ff9b::808:808]', '[2002:808:808::1]', '[2606:4700:4700::1111]']) {
      const res = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: `https://${host}/hook` } });
      expect(res.status, host).toBe(201);
    }
  });
});
