import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { SCHEMA_FILES } from '../scripts/schema-files.ts';
import { buildOpenApiDocument } from '../src/core/openapi.ts';
import { externalSignInRoutes, SAML_ACS_PATH } from '../src/modules/sso/sign-in.routes.ts';
import { startTestApp } from './helpers/app.ts';
import { call } from './helpers/http.ts';

describe('generated contracts', () => {
  it.each(Object.keys(SCHEMA_FILES))('%s is current (run npm run schema)', async (file) => {
    const committed = await readFile(file, 'utf8');
    expect(committed).toBe((SCHEMA_FILES[file] as () => string)());
  });

  it('schema/openapi.json is a valid OpenAPI 3.1 document', async () => {
    const doc = JSON.parse(await readFile('schema/openapi.json', 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes the spec paths that exist so far, spelled exactly', async () => {
    const doc = JSON.parse(await readFile('schema/openapi.json', 'utf8'));
    expect(Object.keys(doc.paths['/api/v1/users'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/users/{id}'])).toContain('get');
    expect(Object.keys(doc.paths['/api/v1/api-keys'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(doc.paths['/api/v1/api-keys/{id}'])).toContain('delete');
    expect(Object.keys(doc.paths['/platform/v1/workspaces'])).toContain('post');
    // Public calls need no credential; sign-in names its workspace in X-Tenant-ID, or by a credential
    // sent instead; other public calls take neither; creates answer 201.
    const login = doc.paths['/api/v1/auth/login'].post;
    expect(login.security).toEqual([{}, { Authorization: [] }]);
    const tenant = login.parameters.find((p: { name: string; in: string }) => `${p.in}:${p.name}` === 'header:X-Tenant-ID');
    expect(tenant.required).toBe(false);
    expect(doc.paths['/api/v1/auth/refresh'].post.security).toEqual([]);
    expect(doc.paths['/api/v1/users'].post.security).toEqual([{ Authorization: [] }]);
    expect(Object.keys(doc.paths['/api/v1/users'].post.responses)).toContain('201');
    expect(Object.keys(doc.paths['/api/v1/users'].post.responses)).not.toContain('200');
    // Express routes, written out by hand: the spec's social sign-in, the CONTRACT's callback and probes.
    for (const path of ['/api/v1/auth/oauth/{provider}/start', '/api/v1/auth/oauth/{provider}/callback', '/healthz', '/readyz']) {
      expect(Object.keys(doc.paths[path] ?? {}), path).toEqual(['get']);
    }
    // Every method the protocol endpoints answer (oauth/routes.ts), POST forms of OpenID Connect included.
    expect(Object.keys(doc.paths['/oauth/userinfo'])).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/oauth/logout'])).toEqual(['get', 'post']);
  });

  it('describes the error answers each call can give: 429 everywhere, 503 in the envelope, 413 with a body, 404 for ids, 409 on conflicts', () => {
    const doc = buildOpenApiDocument('http://localhost');
    type Operation = { responses: Record<string, { content?: Record<string, { schema: unknown }> }> };
    const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item as Record<string, Operation>).map(([method, operation]) => ({ method, path, operation })),
    );
    const statuses = (method: string, path: string) =>
      Object.keys(operations.find((o) => o.method === method && o.path === path)?.operation.responses ?? {});
    const envelope = { $ref: '#/components/schemas/Error' };
    // The global per-IP limit applies to every call but the health probes; the OAuth endpoints answer it in RFC 6749's body.
    for (const { method, path, operation } of operations.filter((o) => !['/healthz', '/readyz'].includes(o.path))) {
      const schema = operation.responses['429']?.content?.['application/json']?.schema;
      expect(schema, `${method} ${path}`).toEqual(
        /^\/(oauth|\.well-known)\//.test(path) ? expect.objectContaining({ required: ['error'] }) : envelope,
      );
    }
    // An envelope call answers 503 UNAVAILABLE while the database is out of reach.
    for (const { method, path, operation } of operations.filter((o) => /^\/(api|platform)\/v1\//.test(o.path))) {
      expect(operation.responses['503']?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(envelope);
    }
    for (const { method, path, operation } of operations.filter(
      (o) => o.path.startsWith('/api/v1/') && ['post', 'put', 'patch'].includes(o.method),
    )) {
      if (operation.responses['302'] || operation.responses['303']) continue;
      expect(operation.responses['413']?.content?.['application/json']?.schema, `${method} ${path}`).toEqual(envelope);
    }
    expect(statuses('post', '/api/v1/users')).toContain('409');
    expect(statuses('post', '/api/v1/groups')).toContain('409');
    expect(statuses('post', '/api/v1/invitations/accept')).toContain('409');
    for (const path of ['/api/v1/roles/assign', '/api/v1/roles/revoke', '/api/v1/invitations/{id}/resend', '/api/v1/groups/{id}/members']) {
      expect(statuses('post', path), path).toEqual(expect.arrayContaining(['404', '409']));
    }
    // A new grant is created (201); giving a held role again updates it (200).
    expect(statuses('post', '/api/v1/roles/assign')).toEqual(expect.arrayContaining(['200', '201']));
    expect(statuses('put', '/api/v1/auth/oauth/providers/{provider}')).toEqual(expect.arrayContaining(['200', '201']));
    expect(statuses('post', '/api/v1/auth/login')).toContain('404');
    // A list names nothing that could be missing, and a call that cannot conflict says so by leaving 409 out.
    expect(statuses('get', '/api/v1/users')).not.toContain('404');
    expect(statuses('post', '/api/v1/webhooks/')).not.toContain('409');
    expect(Object.keys(doc.components?.schemas ?? {}).filter((name) => name.startsWith('error.'))).toEqual([]);
  });

  it('serves a document with every browser sign-in route (the SSO and social callbacks, SAML), and no 404 where none can come', async () => {
    const app = await startTestApp();
    try {
      const res = await call(app, 'GET', '/api/v1/openapi.json');
      expect(res.status).toBe(200);
      const paths = res.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
      // Every method and path the sign-in router answers (not its 405s), read from the router itself.
      // The assertion consumer's route is a pattern (sign-in.routes.ts says why): named here as documented.
      type Layer = { route?: { path: string | string[] | RegExp; methods: Record<string, boolean> } };
      const pathText = (path: string | RegExp) =>
        path === SAML_ACS_PATH ? '/api/v1/auth/sso/saml/{organizationId}/acs' : String(path).replace(/:(\w+)/g, '{$1}');
      const routes = (externalSignInRoutes(app.deps) as unknown as { stack: Layer[] }).stack.flatMap((layer) =>
        layer.route && !layer.route.methods._all
          ? [layer.route.path]
              .flat()
              .flatMap((path) => Object.keys(layer.route?.methods ?? {}).map((method) => `${method} ${pathText(path)}`))
          : [],
      );
      expect(routes).toEqual(
        expect.arrayContaining([
          'get /api/v1/auth/oauth/{provider}/callback',
          'get /api/v1/auth/sso/oidc/callback',
          'get /api/v1/auth/sso/saml/{organizationId}/metadata',
          'post /api/v1/auth/sso/saml/{organizationId}/acs',
        ]),
      );
      for (const route of routes) {
        const [method, path] = route.split(' ') as [string, string];
        expect(paths[path]?.[method], route).toBeDefined();
      }
      const acs = paths['/api/v1/auth/sso/saml/{organizationId}/acs']?.post as unknown as {
        requestBody: { content: Record<string, unknown> };
        responses: Record<string, unknown>;
      };
      expect(Object.keys(acs.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
      expect(Object.keys(acs.responses)).toEqual(expect.arrayContaining(['303', '400', '401', '429']));
      expect(Object.keys(paths['/api/v1/auth/sso/oidc/callback']?.get?.responses ?? {})).toEqual(
        expect.arrayContaining(['303', '400', '401', '429']),
      );
      // mfa/verify names a challenge_id, but an unknown one (or token) is 401 INVALID_TOKEN, never 404.
      expect(Object.keys(paths['/api/v1/auth/mfa/verify']?.post?.responses ?? {})).not.toContain('404');
      const verify = await call(app, 'POST', '/api/v1/auth/mfa/verify', {
        body: { mfa_token: 'mfa_nothing', code: '123456', challenge_id: 'mfc_nothing' },
      });
      expect(verify.status).not.toBe(404);
      // Calls whose body ids may name nothing keep theirs.
      expect(Object.keys(paths['/api/v1/roles/assign']?.post?.responses ?? {})).toContain('404');
    } finally {
      await app.close();
    }
  });

  it('describes the bodies the browser routes refuse with: the envelope on /api/v1, RFC 6749 JSON (or a page for browsers) on /oauth', async () => {
    const doc = buildOpenApiDocument('http://localhost');
    type Answer = { content?: Record<string, { schema: unknown }> };
    const answer = (method: string, path: string, status: string): Answer | undefined =>
      (doc.paths?.[path] as Record<string, { responses: Record<string, Answer> }> | undefined)?.[method]?.responses[status];
    const envelope = { $ref: '#/components/schemas/Error' };
    const refusals = [
      ['/api/v1/auth/oauth/{provider}/start', ['400', '401', '404']],
      ['/api/v1/auth/oauth/{provider}/callback', ['400', '401', '404']],
      ['/api/v1/auth/sso/start', ['400', '401', '404']],
    ] as const;
    for (const [path, statuses] of refusals) {
      for (const status of statuses)
        expect(answer('get', path, status)?.content?.['application/json']?.schema, `${path} ${status}`).toEqual(envelope);
    }
    for (const [method, path] of [
      ['get', '/oauth/authorize'],
      ['post', '/oauth/authorize'],
      ['get', '/oauth/logout'],
      ['post', '/oauth/logout'],
    ]) {
      const content = answer(method as string, path as string, '400')?.content ?? {};
      expect(content['application/json']?.schema, `${method} ${path}`).toEqual(expect.objectContaining({ required: ['error'] }));
      expect(Object.keys(content), `${method} ${path}`).toContain('text/html');
    }

    // What the service answers matches: an unknown client at /oauth/authorize gets RFC 6749 JSON unless
    // the caller asks for HTML, and a social callback whose state names nothing is INVALID_TOKEN.
    const app = await startTestApp();
    try {
      const authorize = await call(
        app,
        'GET',
        '/oauth/authorize?client_id=app_nope&redirect_uri=https%3A%2F%2Fx.test%2Fcb&response_type=code',
      );
      expect(authorize.status).toBe(400);
      expect(authorize.body).toEqual(expect.objectContaining({ error: 'invalid_client' }));
      const page = await fetch(`${app.url}/oauth/authorize?client_id=app_nope&redirect_uri=https%3A%2F%2Fx.test%2Fcb&response_type=code`, {
        headers: { accept: 'text/html' },
      });
      expect(page.status).toBe(400);
      expect(page.headers.get('content-type')).toContain('text/html');
      const callback = await call(app, 'GET', '/api/v1/auth/oauth/google/callback?state=nothing-in-flight&code=x');
      expect(callback.status).toBe(401);
      expect(callback.body.error.code).toBe('INVALID_TOKEN');
    } finally {
      await app.close();
    }
  });
});
