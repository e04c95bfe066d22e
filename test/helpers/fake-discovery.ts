import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the fake provider's discovery document gets wrong: nothing, a misconfiguration that waiting will
 * not fix (no document, not JSON, an endpoint missing, another issuer), or an outage (a 5xx, a 429).
 */
export type DiscoveryFault =
  'none' | 'not_found' | 'not_json' | 'no_authorization_endpoint' | 'no_token_endpoint' | 'other_issuer' | 'down' | 'rate_limited';

export interface FakeDiscovery {
  issuer: string;
  /** What the next discovery request is answered with. */
  fault: DiscoveryFault;
  close(): Promise<void>;
}

/**
 * An OpenID provider that serves only its discovery document (under any issuer path), as `fault` says; every other path
 * answers 503 (the tests using it never get past discovery, or do not need to).
 */
export async function startFakeDiscovery(): Promise<FakeDiscovery> {
  const fake: FakeDiscovery = { issuer: '', fault: 'none', close: async () => undefined };
  const server: Server = createServer((req, res) => {
    if (!req.url?.endsWith('/.well-known/openid-configuration')) return void res.writeHead(503).end('down for maintenance');
    const document: Record<string, unknown> = {
      issuer: fake.fault === 'other_issuer' ? `${fake.issuer}/tenant` : fake.issuer,
      authorization_endpoint: `${fake.issuer}/authorize`,
      token_endpoint: `${fake.issuer}/token`,
      jwks_uri: `${fake.issuer}/jwks`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    };
    if (fake.fault === 'no_authorization_endpoint') delete document.authorization_endpoint;
    if (fake.fault === 'no_token_endpoint') delete document.token_endpoint;
    switch (fake.fault) {
      case 'not_found':
        return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
      case 'not_json':
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome</body></html>');
      case 'down':
        return void res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
      case 'rate_limited':
        return void res.writeHead(429, { 'retry-after': '5' }).end('slow down');
      default:
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}
