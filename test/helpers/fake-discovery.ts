import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';

/**
 * What the fake provider's discovery document gets wrong: nothing, a misconfiguration that waiting will
 * not fix (no document, not JSON, an endpoint missing, another issuer), or an outage (a 5xx, a 429).
 */
export type DiscoveryFault =
  | 'none'
  | 'not_found'
  | 'not_json'
  | 'no_authorization_endpoint'
  | 'no_token_endpoint'
  | 'no_jwks_uri'
  | 'other_issuer'
  | 'down'
  | 'rate_limited';

/**
 * What an endpoint the service calls after the browser comes back (token, userinfo, JWKS) answers:
 * rightly, with a page of another server (a 404, a 405, a redirect, an HTML page, text that is no
 * JSON), down (a 502, a 429, nothing listening), or — the token endpoint — an OAuth error or a 200
 * without the token the sign-in needs.
 */
export type EndpointFault =
  | 'none'
  | 'not_found'
  | 'method_not_allowed'
  | 'redirect'
  | 'html'
  | 'not_json'
  | 'down'
  | 'rate_limited'
  | 'unreachable'
  | 'invalid_grant'
  | 'invalid_client'
  | 'no_access_token'
  | 'no_id_token';

export interface FakeDiscovery {
  issuer: string;
  /** What the next discovery request is answered with. */
  fault: DiscoveryFault;
  /** What the token, userinfo and JWKS endpoints answer (the discovery document names all three). */
  token: EndpointFault;
  userinfo: EndpointFault;
  jwks: EndpointFault;
  /**
   * What signs the id_token: the key its JWKS publishes, another one under the same `kid` (a forged
   * token), or the client secret (HS256, which the discovery document then lists).
   */
  idTokenKey: 'published' | 'unpublished' | 'client_secret';
  /** Another token endpoint for the discovery document to name (a path this server answers 404). */
  tokenEndpoint: string | undefined;
  /** The user the next authorization signs in (the provider's own login is skipped). */
  claims: Record<string, unknown>;
  /** Clears every fault: each endpoint answers as a working provider does, signing with the published key. */
  behaveWell(): void;
  /**
   * Plays the browser at the provider's authorization endpoint: answers the callback URL it redirects
   * to (with a code and the state), the nonce kept for the id_token.
   */
  authorize(url: string): Promise<URL>;
  close(): Promise<void>;
}

/** Answers an endpoint's fault; false for `none` (or a fault the endpoint has no answer of its own for). */
function answerFault(res: ServerResponse, fault: EndpointFault, issuer: string): boolean {
  const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  switch (fault) {
    case 'not_found':
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
      return true;
    case 'method_not_allowed':
      res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET' }).end('Method Not Allowed');
      return true;
    case 'redirect':
      res.writeHead(302, { location: `${issuer}/login` }).end();
      return true;
    case 'html':
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Welcome to our portal</body></html>');
      return true;
    case 'not_json':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token": ');
      return true;
    case 'down':
      res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>');
      return true;
    case 'rate_limited':
      res.writeHead(429, { 'retry-after': '5' }).end('slow down');
      return true;
    case 'invalid_grant':
      json(400, { error: 'invalid_grant', error_description: 'The code has expired' });
      return true;
    case 'invalid_client':
      json(401, { error: 'invalid_client', error_description: 'Client authentication failed' });
      return true;
    default:
      return false;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** The client id and secret of a token request (client_secret_post, or client_secret_basic). */
function clientOf(req: IncomingMessage, form: URLSearchParams): { id: string; secret: string } {
  const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
  if (basic?.[1]) {
    const [id = '', secret = ''] = Buffer.from(basic[1], 'base64').toString().split(':').map(decodeURIComponent);
    return { id, secret };
  }
  return { id: form.get('client_id') ?? '', secret: form.get('client_secret') ?? '' };
}

/**
 * An OpenID provider (under any issuer path) whose discovery document, token, userinfo and JWKS
 * endpoints answer as its faults say: rightly by default, a code flow with an RS256 id_token whose
 * nonce is the one the authorization request carried. Any other path answers 404.
 */
export async function startFakeDiscovery(): Promise<FakeDiscovery> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const unpublished = (await generateKeyPair('RS256')).privateKey;
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'fake-1', use: 'sig', alg: 'RS256' };
  const nonces = new Map<string, string | null>();
  const wellBehaved = {
    fault: 'none',
    token: 'none',
    userinfo: 'none',
    jwks: 'none',
    idTokenKey: 'published',
    tokenEndpoint: undefined,
  } as const satisfies Partial<FakeDiscovery>;
  const fake: FakeDiscovery = {
    issuer: '',
    ...wellBehaved,
    behaveWell: () => Object.assign(fake, wellBehaved),
    claims: { sub: 'fake-user', email: 'fake-user@fake-idp.example', email_verified: true },
    authorize: async (raw) => {
      const url = new URL(raw);
      const code = randomBytes(16).toString('base64url');
      nonces.set(code, url.searchParams.get('nonce'));
      const back = new URL(url.searchParams.get('redirect_uri') as string);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') as string);
      return back;
    },
    close: async () => undefined,
  };
  const endpoint = (path: string, fault: EndpointFault) =>
    fault === 'unreachable' ? `http://127.0.0.1:9${path}` : `${fake.issuer}${path}`;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake.test').pathname;
    if (path.endsWith('/token')) {
      if (answerFault(res, fake.token, fake.issuer)) return;
      void readBody(req).then(async (body) => {
        const form = new URLSearchParams(body);
        const code = form.get('code') ?? '';
        if (!nonces.has(code)) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
        const nonce = nonces.get(code);
        nonces.delete(code);
        const client = clientOf(req, form);
        const shared = fake.idTokenKey === 'client_secret';
        const idToken = await new SignJWT({ ...fake.claims, ...(nonce ? { nonce } : {}) })
          .setProtectedHeader(shared ? { alg: 'HS256' } : { alg: 'RS256', kid: 'fake-1' })
          .setIssuer(fake.issuer)
          .setAudience(client.id)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(shared ? new TextEncoder().encode(client.secret) : fake.idTokenKey === 'unpublished' ? unpublished : privateKey);
        const tokens: Record<string, unknown> = {
          access_token: 'fake-access-token',
          token_type: 'Bearer',
          expires_in: 300,
          id_token: idToken,
        };
        if (fake.token === 'no_access_token') delete tokens.access_token;
        if (fake.token === 'no_id_token') delete tokens.id_token;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(tokens));
      });
      return;
    }
    if (path.endsWith('/userinfo')) {
      if (answerFault(res, fake.userinfo, fake.issuer)) return;
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(fake.claims));
    }
    if (path.endsWith('/jwks')) {
      if (answerFault(res, fake.jwks, fake.issuer)) return;
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    }
    if (!path.endsWith('/.well-known/openid-configuration'))
      return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
    const document: Record<string, unknown> = {
      issuer: fake.fault === 'other_issuer' ? `${fake.issuer}/tenant` : fake.issuer,
      authorization_endpoint: `${fake.issuer}/authorize`,
      token_endpoint: fake.tokenEndpoint ?? endpoint('/token', fake.token),
      userinfo_endpoint: endpoint('/userinfo', fake.userinfo),
      jwks_uri: endpoint('/jwks', fake.jwks),
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: fake.idTokenKey === 'client_secret' ? ['RS256', 'HS256'] : ['RS256'],
    };
    if (fake.fault === 'no_authorization_endpoint') delete document.authorization_endpoint;
    if (fake.fault === 'no_token_endpoint') delete document.token_endpoint;
    if (fake.fault === 'no_jwks_uri') delete document.jwks_uri;
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
