import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, someIp } from '../../../test/helpers/auth.ts';
import { call } from '../../../test/helpers/http.ts';
import { toldEvents } from '../../../test/helpers/events.ts';
import { fixtureKey, idpMetadataXml, samlResponseXml, signSamlXml, toBase64 } from '../../../test/helpers/saml.ts';
import { startFakeDiscovery, type FakeDiscovery } from '../../../test/helpers/fake-discovery.ts';
import { startTestIdp, type TestIdp } from '../../../test/helpers/test-idp.ts';
import { createWorkspace, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/** Enterprise SSO end to end: the Admin Portal configures the connection, users sign in through it. */
describe('organizations: Admin Portal and SSO sign-in (OpenID Connect and SAML)', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let idp: TestIdp;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_IDP_TARGETS: 'true' });
    ws = await createWorkspace(app, 'SSO');
    base = app.deps.config.BASE_URL;
    idp = await startTestIdp([
      { client_id: 'acme-app', client_secret: 'acme-idp-secret', redirect_uris: [`${base}/api/v1/auth/sso/oidc/callback`] },
    ]);
  });
  afterAll(async () => {
    await idp.close();
    await app.close();
  });

  const onApp = (url: string | URL) => {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  };

  async function organization(name: string, domain: string, sso: Record<string, unknown> = {}, on: TestWorkspace = ws) {
    const res = await call(app, 'POST', '/api/v1/organizations', { token: on.apiKey, body: { name, domains: [domain], sso } });
    expect(res.status).toBe(201);
    return res.body.data.id as string;
  }

  /** Opens a fresh portal link as the IT admin's browser: answers the session cookie. */
  async function openPortal(organizationId: string, on: TestWorkspace = ws): Promise<string> {
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', {
      token: on.apiKey,
      body: { organization_id: organizationId },
    });
    expect(link.status).toBe(201);
    const opened = await call(app, 'GET', onApp(link.body.data.link));
    expect(opened.status).toBe(303);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    expect(cookie).toMatch(/^portal_session=/);
    return cookie;
  }

  function postForm(path: string, cookie: string, form: Record<string, string>) {
    return call(app, 'POST', path, {
      raw: new URLSearchParams(form).toString(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
  }

  async function exchange(location: URL) {
    return call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code: location.searchParams.get('code') } });
  }

  it('issues a single-use portal link that expires after five minutes', async () => {
    const org = await organization('Portal Co', 'portal-co.example');
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization_id: org } });
    expect(link.body.data.link).toMatch(new RegExp(`^${base}/portal\\?token=`));
    const first = await call(app, 'GET', onApp(link.body.data.link));
    expect(first.status).toBe(303);
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    expect(first.headers.get('set-cookie')).toMatch(/SameSite=Strict/i);
    const again = await call(app, 'GET', onApp(link.body.data.link));
    expect(again.status).toBe(401);
    expect(again.body).toContain('expired or was already used');

    // WorkOS's spelling of the same request.
    const workos = await call(app, 'POST', '/api/v1/organizations/portal-link', {
      token: ws.apiKey,
      body: { organization: org, intent: 'sso' },
    });
    expect(workos.status).toBe(201);
    expect(workos.body.data.link).toMatch(new RegExp(`^${base}/portal\\?token=`));
    for (const body of [{}, { organization: org, organization_id: org }, { organization: org, intent: 'dsync' }]) {
      const refused = await call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body });
      expect([refused.status, refused.body.error.code], JSON.stringify(body)).toEqual([400, 'BAD_REQUEST']);
    }
    const unknown = await call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization: 'org_nope' } });
    expect(unknown.status).toBe(404);
    const later = await call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization_id: org } });
    app.clock.advance(5 * 60_000 + 1000);
    expect((await call(app, 'GET', onApp(later.body.data.link))).status).toBe(401);
    expect((await call(app, 'GET', '/portal/sso')).status).toBe(401);

    const page = await call(app, 'GET', '/portal/sso', {
      headers: { cookie: (first.headers.get('set-cookie') ?? '').split(';')[0] as string },
    });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.body).toContain('Portal Co');
    expect(page.body).toContain(`${base}/api/v1/auth/sso/saml/${org}/acs`);
    expect(page.body).not.toMatch(/<script|style=/);
    // The portal session lasts 30 minutes from opening the link.
    app.clock.advance(30 * 60_000);
    const ended = await call(app, 'GET', '/portal/sso', {
      headers: { cookie: (first.headers.get('set-cookie') ?? '').split(';')[0] as string },
    });
    expect(ended.status).toBe(401);
    const other = await createWorkspace(app, 'Elsewhere');
    expect(
      (await call(app, 'POST', '/api/v1/organizations/portal-link', { token: other.apiKey, body: { organization_id: org } })).status,
    ).toBe(404);
  });

  /** Connects the test IdP to an organization through its Admin Portal, as its IT admin does. */
  async function connectTestIdp(organizationId: string, on: TestWorkspace = ws): Promise<void> {
    const saved = await postForm('/portal/sso/oidc', await openPortal(organizationId, on), {
      issuer: idp.issuer,
      client_id: 'acme-app',
      client_secret: 'acme-idp-secret',
    });
    expect(saved.status).toBe(200);
  }

  it('tests an OpenID connection before saving it, then signs users of the domain in through it', async () => {
    const org = await organization('Acme', 'acme-sso.example');
    const cookie = await openPortal(org);

    const bad = await postForm('/portal/sso/oidc', cookie, {
      issuer: 'http://127.0.0.1:9/nothing',
      client_id: 'acme-app',
      client_secret: 's',
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('connection test failed');
    expect((await call(app, 'GET', `/api/v1/organizations/${org}/sso-connection`, { token: ws.apiKey })).body.data.kind).toBeNull();
    const foreign = await call(app, 'POST', '/portal/sso/oidc', {
      raw: new URLSearchParams({ issuer: idp.issuer, client_id: 'acme-app', client_secret: 'acme-idp-secret' }).toString(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);

    const saved = await postForm('/portal/sso/oidc', cookie, {
      issuer: idp.issuer,
      client_id: 'acme-app',
      client_secret: 'acme-idp-secret',
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toContain('tested and saved');
    const shown = await call(app, 'GET', `/api/v1/organizations/${org}/sso-connection`, { token: ws.apiKey });
    expect(shown.body.data).toMatchObject({
      kind: 'oidc',
      active: true,
      oidc: { issuer: idp.issuer, client_id: 'acme-app', client_secret: '••••cret' },
    });
    expect(JSON.stringify(shown.body)).not.toContain('acme-idp-secret');

    const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=jane@acme-sso.example`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get('location') as string);
    expect(authorize.origin).toBe(idp.issuer);
    expect(authorize.searchParams.get('login_hint')).toBe('jane@acme-sso.example');
    idp.signInAs({ sub: 'jane', claims: { email: 'jane@acme-sso.example', given_name: 'Jane', family_name: 'Doe', groups: ['eng'] } });
    const callback = await idp.authorize(authorize.href);
    const back = await call(app, 'GET', onApp(callback));
    expect(back.status).toBe(303);
    const signedIn = await exchange(new URL(back.headers.get('location') as string));
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user).toMatchObject({ email: 'jane@acme-sso.example', name: 'Jane Doe', email_verified: true });
    expect(signedIn.body.data.user.metadata).toMatchObject({ first_name: 'Jane', last_name: 'Doe', groups: ['eng'] });
    const orgNow = await call(app, 'GET', `/api/v1/organizations/${org}`, { token: ws.apiKey });
    expect(orgNow.body.data.member_count).toBe(1);
    const roles = await call(app, 'GET', `/api/v1/users/${signedIn.body.data.user.id}/roles`, { token: ws.apiKey });
    expect(roles.body.data.map((r: { key: string }) => r.key)).toEqual(['member']);

    // The IdP speaks for the organization's domains only. The app's state comes back with the refusal.
    const outsider = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&organization_id=${org}&state=app-1`);
    idp.signInAs({ sub: 'mallory', claims: { email: 'ceo@other-company.example' } });
    const refused = await call(app, 'GET', onApp(await idp.authorize(new URL(outsider.headers.get('location') as string).href)));
    const refusedAt = new URL(refused.headers.get('location') as string);
    expect([refusedAt.searchParams.get('error'), refusedAt.searchParams.get('state')]).toEqual(['access_denied', 'app-1']);

    // The user cancels at the IdP: its access_denied reaches the app, with the app's state.
    const cancelled = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&organization_id=${org}&state=app-2`);
    const ours = new URL(cancelled.headers.get('location') as string).searchParams.get('state') as string;
    const cancel = await call(app, 'GET', `/api/v1/auth/sso/oidc/callback?error=access_denied&state=${ours}`);
    const cancelledAt = new URL(cancel.headers.get('location') as string);
    expect([cancelledAt.searchParams.get('error'), cancelledAt.searchParams.get('state')]).toEqual(['access_denied', 'app-2']);
    const tooLong = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&organization_id=${org}&state=${'s'.repeat(513)}`);
    expect([tooLong.status, tooLong.body.error.code]).toEqual([400, 'BAD_REQUEST']);

    // With just-in-time provisioning off, unknown users are refused and known ones still sign in.
    await call(app, 'PATCH', `/api/v1/organizations/${org}`, { token: ws.apiKey, body: { sso: { jit_provisioning: false } } });
    const newcomer = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=new@acme-sso.example`);
    idp.signInAs({ sub: 'new', claims: { email: 'new@acme-sso.example' } });
    const noJit = await call(app, 'GET', onApp(await idp.authorize(new URL(newcomer.headers.get('location') as string).href)));
    expect(new URL(noJit.headers.get('location') as string).searchParams.get('error')).toBe('access_denied');

    const noOrg = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=someone@unknown.example`);
    expect(noOrg.status).toBe(404);
  });

  it('writes nothing when the portal re-submits the connection it already has (the secret opened to compare); a change is written', async () => {
    const org = await organization('Resubmit', 'resubmit-sso.example');
    const cookie = await openPortal(org);
    const oidc = { issuer: idp.issuer, client_id: 'acme-app', client_secret: 'acme-idp-secret' };
    expect((await postForm('/portal/sso/oidc', cookie, oidc)).status).toBe(200);
    const connection = async () => (await call(app, 'GET', `/api/v1/organizations/${org}/sso-connection`, { token: ws.apiKey })).body.data;
    const writes = async () => {
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=organization.sso_connection&per_page=100', {
        token: ws.apiKey,
      });
      const rows = audit.body.data.filter((e: { target: { id: string } }) => e.target.id === org).length;
      const events = (await toldEvents(app, ws.id, 'sso_connection.saved')).filter((e) => e.organization_id === org).length;
      return [rows, events];
    };
    const first = await connection();
    expect(await writes()).toEqual([1, 1]);
    app.clock.advance(5000);
    expect((await postForm('/portal/sso/oidc', cookie, { ...oidc, issuer: `${idp.issuer}/` })).status).toBe(200);
    expect(await connection()).toEqual(first);
    expect(await writes()).toEqual([1, 1]);

    const metadata = idpMetadataXml({
      entityId: 'https://idp.resubmit.example/saml',
      ssoUrl: 'https://idp.resubmit.example/sso',
      certs: [fixtureKey('idp').certBase64],
    });
    expect((await postForm('/portal/sso/saml', cookie, { metadata_xml: metadata })).status).toBe(200);
    const saml = await connection();
    expect([saml.kind, saml.updated_at === first.updated_at]).toEqual(['saml', false]);
    expect(await writes()).toEqual([2, 2]);
    app.clock.advance(5000);
    expect((await postForm('/portal/sso/saml', cookie, { metadata_xml: metadata })).status).toBe(200);
    expect(await connection()).toEqual(saml);
    expect(await writes()).toEqual([2, 2]);
  });

  it('refuses an OpenID connection at a loopback or private address unless ALLOW_PRIVATE_IDP_TARGETS: when saved, and when used', async () => {
    const strict = await startTestApp();
    try {
      const org = await organization('Private IdP', 'private-idp.example');
      // Saved by a deployment that allows it (as this file's does), used by one that does not: never called.
      await connectTestIdp(org);
      const start = await call(strict, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=jo@private-idp.example`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect([start.status, start.body.error.code]).toEqual([400, 'BAD_REQUEST']);
      expect(start.body.error.message).toMatch(/loopback, private/);

      // Its Admin Portal refuses to save one, with the reason.
      const link = await call(strict, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization_id: org } });
      const opened = await call(strict, 'GET', onApp(link.body.data.link));
      const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
      const refused = await call(strict, 'POST', '/portal/sso/oidc', {
        raw: new URLSearchParams({ issuer: idp.issuer, client_id: 'acme-app', client_secret: 'acme-idp-secret' }).toString(),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatch(/loopback, private/);
    } finally {
      await strict.close();
    }
  });

  it('tells the app temporarily_unavailable when the organization’s IdP token endpoint is down, audited provider_unavailable', async () => {
    const down = createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
      if (req.url !== '/.well-known/openid-configuration') return void res.writeHead(503).end('down for maintenance');
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        }),
      );
    });
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    try {
      const org = await organization('Down IdP', 'down-idp.example');
      const saved = await postForm('/portal/sso/oidc', await openPortal(org), {
        issuer: `http://127.0.0.1:${(down.address() as AddressInfo).port}`,
        client_id: 'down-app',
        client_secret: 'down-secret',
      });
      expect(saved.status).toBe(200);
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=jo@down-idp.example&state=app-2`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(start.status).toBe(302);
      const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
      const back = await call(app, 'GET', `/api/v1/auth/sso/oidc/callback?code=c&state=${encodeURIComponent(state)}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(back.status).toBe(303);
      const result = new URL(back.headers.get('location') as string).searchParams;
      expect([result.get('error'), result.get('state')]).toEqual(['temporarily_unavailable', 'app-2']);
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', {
        token: ws.apiKey,
      });
      expect(audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason)).toContain('provider_unavailable');
    } finally {
      down.closeAllConnections();
      await new Promise<void>((resolve) => down.close(() => resolve()));
    }
  });

  it('answers an organization’s IdP whose discovery document went wrong as misconfigured: 500 at the start (no Retry-After), server_error to the app; an outage stays 503', async () => {
    const fake = await startFakeDiscovery();
    try {
      const org = await organization('Broken IdP', 'broken-idp.example');
      // The portal tests the issuer before it saves, so the document goes wrong after.
      const save = async (clientId: string) => {
        const saved = await postForm('/portal/sso/oidc', await openPortal(org), {
          issuer: fake.issuer,
          client_id: clientId,
          client_secret: 'broken-secret',
        });
        expect(saved.status).toBe(200);
      };
      const start = () =>
        call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=jo@broken-idp.example&state=app-4`, {
          headers: { 'x-forwarded-for': someIp() },
        });
      await save('broken-1');
      fake.fault = 'not_json';
      const refused = await start();
      expect([refused.status, refused.body.error?.code, refused.headers.get('retry-after')]).toEqual([500, 'INTERNAL', null]);
      expect(refused.body.error.message).toContain(fake.issuer);
      expect(refused.body.error.message).toMatch(/not a JSON object/);

      fake.fault = 'none';
      const started = await start();
      expect(started.status).toBe(302);
      const state = new URL(started.headers.get('location') as string).searchParams.get('state') as string;
      // Another client id, so the callback reads discovery again rather than the start's.
      await save('broken-2');
      fake.fault = 'no_token_endpoint';
      const back = await call(app, 'GET', `/api/v1/auth/sso/oidc/callback?code=c&state=${encodeURIComponent(state)}`, {
        headers: { 'x-forwarded-for': someIp() },
      });
      expect(back.status).toBe(303);
      const result = new URL(back.headers.get('location') as string).searchParams;
      expect([result.get('error'), result.get('state')]).toEqual(['server_error', 'app-4']);
      expect(result.get('error_description')).toMatch(/token_endpoint/);
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=100', {
        token: ws.apiKey,
      });
      expect(audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason)).toContain('provider_misconfigured');

      fake.fault = 'down';
      const down = await start();
      expect([down.status, down.body.error?.code, down.headers.get('retry-after')]).toEqual([503, 'UNAVAILABLE', '30']);
    } finally {
      await fake.close();
    }
  });

  it('tells the app what went wrong at the organization’s IdP after the browser came back: server_error naming a token endpoint or JWKS that answers wrongly or refuses the client, temporarily_unavailable when down; a forged id_token or no jwks_uri is refused', async () => {
    const fake = await startFakeDiscovery();
    try {
      const org = await organization('Faulty IdP', 'faulty-idp.example');
      let clients = 0;
      const through = async (set: (f: FakeDiscovery) => void) => {
        fake.behaveWell();
        fake.claims = { sub: 'jo', email: 'jo@faulty-idp.example', email_verified: true };
        // The portal tests the issuer before it saves, so the faults come after; a client of its own each time.
        clients += 1;
        const saved = await postForm('/portal/sso/oidc', await openPortal(org), {
          issuer: fake.issuer,
          client_id: `faulty-${clients}`,
          client_secret: 'faulty-secret',
        });
        expect(saved.status).toBe(200);
        set(fake);
        const started = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=jo@faulty-idp.example&state=app-6`, {
          headers: { 'x-forwarded-for': someIp() },
        });
        if (started.status !== 302) return { started, result: null };
        const back = await fake.authorize(started.headers.get('location') as string);
        const res = await call(app, 'GET', onApp(back), { headers: { 'x-forwarded-for': someIp() } });
        expect(res.status).toBe(303);
        return { started, result: new URL(res.headers.get('location') as string).searchParams };
      };

      const fine = await through(() => undefined);
      expect(fine.result?.get('code'), JSON.stringify(fine.started.body)).toBeTruthy();

      const cases: [(f: FakeDiscovery) => void, string, RegExp | null][] = [
        [(f) => (f.token = 'not_found'), 'server_error', /its token endpoint \(.*\/token\) answered HTTP 404/],
        [(f) => (f.token = 'html'), 'server_error', /its token endpoint .* answered something that is not JSON/],
        [(f) => (f.token = 'invalid_client'), 'server_error', /refused this service's client \(invalid_client\)/],
        [(f) => (f.userinfo = 'redirect'), 'server_error', /its userinfo endpoint .* answered HTTP 302/],
        [(f) => (f.jwks = 'not_found'), 'server_error', /its JWKS \(jwks_uri .*\/jwks\) answered HTTP 404/],
        [(f) => (f.token = 'down'), 'temporarily_unavailable', null],
        [(f) => (f.jwks = 'down'), 'temporarily_unavailable', null],
        [(f) => (f.token = 'invalid_grant'), 'access_denied', null],
        [(f) => (f.idTokenKey = 'unpublished'), 'access_denied', null],
      ];
      for (const [set, error, problem] of cases) {
        const { result } = await through(set);
        expect([result?.get('error'), result?.get('state')], String(set)).toEqual([error, 'app-6']);
        if (problem) {
          expect(result?.get('error_description'), String(set)).toContain(fake.issuer);
          expect(result?.get('error_description'), String(set)).toMatch(problem);
        }
      }
      const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=9', { token: ws.apiKey });
      expect(audit.body.data.map((e: { details: { reason?: string } }) => e.details.reason).reverse()).toEqual([
        ...Array(5).fill('provider_misconfigured'),
        'provider_unavailable',
        'provider_unavailable',
        'provider_refused',
        'provider_error',
      ]);

      // A discovery document that lost its jwks_uri after the portal saved it: refused at the start.
      const { started } = await through((f) => (f.fault = 'no_jwks_uri'));
      expect([started.status, started.body.error?.code, started.headers.get('retry-after')]).toEqual([500, 'INTERNAL', null]);
      expect(started.body.error.message).toMatch(/its discovery document has no jwks_uri/);
    } finally {
      await fake.close();
    }
  });

  it('matches an internationalised email domain to the organization in either form, and keeps the account in punycode', async () => {
    // The organization names its domain in Unicode; users type it, and the IdP asserts it, in any form.
    const org = await organization('Bücher', 'Bücher-SSO.example.');
    const ascii = new URL('http://bücher-sso.example').hostname;
    expect((await call(app, 'GET', `/api/v1/organizations/${org}`, { token: ws.apiKey })).body.data.domains).toEqual([ascii]);
    await connectTestIdp(org);
    const headers = { 'x-forwarded-for': someIp() };
    const viaSso = async (typed: string, asserted: string) => {
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=${encodeURIComponent(typed)}`, { headers });
      expect(start.status, typed).toBe(302);
      idp.signInAs({ sub: `idn-${asserted}`, claims: { email: asserted } });
      const back = await call(app, 'GET', onApp(await idp.authorize(start.headers.get('location') as string)), { headers });
      return exchange(new URL(back.headers.get('location') as string));
    };
    const first = await viaSso(' Anna@BÜCHER-SSO.example ', 'Anna@Bücher-SSO.example');
    expect([first.status, first.body.data?.user?.email]).toEqual([200, `anna@${ascii}`]);
    const again = await viaSso(`anna@${ascii}`, `ANNA@${ascii.toUpperCase()}`);
    expect([again.status, again.body.data?.user?.id]).toEqual([200, first.body.data.user.id]);
    // The account is the one a password sign-in reaches, whichever form is typed.
    const listed = await call(app, 'GET', `/api/v1/users?q=${encodeURIComponent(ascii)}`, { token: ws.apiKey });
    expect(listed.body.meta.total).toBe(1);
  });

  it('never signs in through SSO to an account worth more than its default role: domains are unverified, so that would be a takeover', async () => {
    // An admin (or a custom role with organizations:write) names the owner's domain and connects an IdP it runs.
    const org = await organization('Claimed', 'claimed-sso.example');
    await connectTestIdp(org);
    const existing = async (email: string, role: string | null) => {
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'an existing passphrase' } });
      expect(user.status).toBe(201);
      if (role) {
        const roles = (await call(app, 'GET', '/api/v1/roles?per_page=100', { token: ws.apiKey })).body.data as {
          id: string;
          key: string;
        }[];
        const roleId = roles.find((r) => r.key === role)?.id;
        // Only an owner grants owner.
        const token = role === 'owner' ? (await login(app, ws.id, ws.owner.email, ws.owner.password)).body.data.access_token : ws.apiKey;
        const given = await call(app, 'POST', '/api/v1/roles/assign', {
          token,
          body: { user_id: user.body.data.id, role_id: roleId },
        });
        expect(given.status).toBe(201);
      }
      return user.body.data.id as string;
    };
    // Each sign-in from an address of its own, clear of the per-IP limit of /auth/oauth/* the later tests share.
    const viaSso = async (email: string) => {
      const headers = { 'x-forwarded-for': someIp() };
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=${email}`, { headers });
      idp.signInAs({ sub: email, claims: { email } });
      const back = await call(app, 'GET', onApp(await idp.authorize(start.headers.get('location') as string)), { headers });
      const location = new URL(back.headers.get('location') as string);
      const signIn = () => call(app, 'POST', '/api/v1/auth/oauth/exchange', { headers, body: { code: location.searchParams.get('code') } });
      return { error: location.searchParams.get('error'), description: location.searchParams.get('error_description'), signIn };
    };

    await existing('boss@claimed-sso.example', 'owner');
    await existing('ops@claimed-sso.example', 'admin');
    await existing('auditor@claimed-sso.example', 'viewer');
    const member = await existing('dev@claimed-sso.example', null);
    // A viewer's reads are beyond the default role (member) too.
    for (const email of ['boss@claimed-sso.example', 'ops@claimed-sso.example', 'auditor@claimed-sso.example']) {
      expect((await viaSso(email)).error, email).toBe('access_denied');
    }
    // An account the default role (member) covers signs in as before, and is the same account.
    const signedIn = await (await viaSso('dev@claimed-sso.example')).signIn();
    expect([signedIn.status, signedIn.body.data.user.id]).toEqual([200, member]);
    // With admin as the default role, the admin's account is covered; the owner's never is.
    await call(app, 'PATCH', `/api/v1/organizations/${org}`, { token: ws.apiKey, body: { sso: { default_role: 'admin' } } });
    expect((await (await viaSso('ops@claimed-sso.example')).signIn()).status).toBe(200);
    expect((await (await viaSso('auditor@claimed-sso.example')).signIn()).status).toBe(200);
    const owner = await viaSso('boss@claimed-sso.example');
    expect(owner.error).toBe('access_denied');
    // The app is told why, and the refusal is in the audit log as a failed sign-in.
    expect(owner.description).toBe(
      "SSO cannot sign in to this account: it holds rights the organization's SSO does not give (owner); sign in with its password",
    );
    const failures = await call(app, 'GET', '/api/v1/audit/events/?event_type=auth.login&outcome=failure&per_page=1', { token: ws.apiKey });
    expect(failures.body.data[0].details).toMatchObject({ method: 'sso', reason: 'FORBIDDEN' });
  });

  it('discovers SSO among the named workspace’s organizations only: another workspace’s claim of the domain routes nobody here', async () => {
    const other = await createWorkspace(app, 'SSO elsewhere');
    const headers = { 'x-forwarded-for': someIp() };
    // Both workspaces name the domain; only the other one connects an identity provider.
    const ours = await organization('Shared here', 'shared-sso.example');
    const theirs = await organization('Shared there', 'shared-sso.example', {}, other);
    await connectTestIdp(theirs, other);
    const pat = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: 'pat@shared-sso.example', password: 'pat passphrase here' },
    });
    expect(pat.status).toBe(201);

    const here = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=pat@shared-sso.example`, { headers });
    expect([here.status, here.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const crossed = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&organization_id=${theirs}`, { headers });
    expect([crossed.status, crossed.body.error.code]).toEqual([404, 'NOT_FOUND']);

    // Through the other workspace, the same address reaches that workspace's account, not ours.
    const there = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${other.id}&email=pat@shared-sso.example`, { headers });
    expect(there.status).toBe(302);
    idp.signInAs({ sub: 'pat-shared', claims: { email: 'pat@shared-sso.example' } });
    const back = await call(app, 'GET', onApp(await idp.authorize(there.headers.get('location') as string)), { headers });
    const signedIn = await exchange(new URL(back.headers.get('location') as string));
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user.id).not.toBe(pat.body.data.id);
    const theirMembers = await call(app, 'GET', `/api/v1/organizations/${theirs}/members`, { token: other.apiKey });
    expect(theirMembers.body.data.map((m: { user_id: string }) => m.user_id)).toEqual([signedIn.body.data.user.id]);
    expect((await call(app, 'GET', `/api/v1/organizations/${ours}/members`, { token: ws.apiKey })).body.meta.total).toBe(0);
    const ourUser = await call(app, 'GET', `/api/v1/users/${pat.body.data.id}`, { token: ws.apiKey });
    expect(ourUser.body.data).toMatchObject({ email: 'pat@shared-sso.example', last_sign_in_at: null, email_verified: false });
  });

  it('sends a failed start the browser navigated to for the dashboard back to /login/callback with the error; a program still gets the envelope', async () => {
    // node:http, not fetch: fetch sends Sec-Fetch-Mode: cors whatever it is given, as a browser's fetch does.
    const get = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Headers; body: { error?: { code: string } } }>((resolve, reject) => {
        const req = request(`${app.url}${path}`, { headers: { 'x-forwarded-for': someIp(), ...headers } }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            const json = (res.headers['content-type'] ?? '').includes('json');
            resolve({
              status: res.statusCode as number,
              headers: new Headers({ location: res.headers.location ?? '' }),
              body: json ? JSON.parse(text) : {},
            });
          });
        });
        req.on('error', reject).end();
      });
    const start = (query: string, headers: Record<string, string>) => get(`/api/v1/auth/sso/start?workspace_id=${ws.id}&${query}`, headers);
    const navigate = { 'sec-fetch-mode': 'navigate', accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    // A plain-http origin other than localhost: the browser sends no Sec-Fetch-*, only its Accept.
    const plainHttpNavigation = { accept: navigate.accept };
    for (const headers of [navigate, plainHttpNavigation]) {
      const unclaimed = await start('email=nobody%40unclaimed-sso.example', headers);
      expect(unclaimed.status).toBe(303);
      const at = new URL(unclaimed.headers.get('location') as string);
      expect(`${at.origin}${at.pathname}`).toBe(`${base}/login/callback`);
      expect(Object.fromEntries(at.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'No organization signs in with SSO for this email domain',
      });
      const malformed = new URL((await start('email=not-an-address', headers)).headers.get('location') as string);
      expect(malformed.searchParams.get('error')).toBe('invalid_request');
      // The state the start was sent with comes back with the error (RFC 6749 §4.1.2.1), so the tab knows it is its own.
      const bound = new URL(
        (await start('email=nobody%40unclaimed-sso.example&state=tab-state_1', headers)).headers.get('location') as string,
      );
      expect([bound.searchParams.get('error'), bound.searchParams.get('state')]).toEqual(['access_denied', 'tab-state_1']);
      // A state the start refused is not handed back.
      const refusedState = new URL(
        (await start(`email=nobody%40unclaimed-sso.example&state=${'s'.repeat(513)}`, headers)).headers.get('location') as string,
      );
      expect([refusedState.searchParams.get('error'), refusedState.searchParams.has('state')]).toEqual(['invalid_request', false]);
    }
    // fetch (Sec-Fetch-Mode: cors), curl (Accept: */*), an app that named its redirect_uri: the envelope, as before.
    for (const [query, headers] of [
      ['email=nobody%40unclaimed-sso.example', { 'sec-fetch-mode': 'cors', accept: 'text/html' }],
      ['email=nobody%40unclaimed-sso.example', { accept: '*/*' }],
      ['email=nobody%40unclaimed-sso.example', {}],
      [`email=nobody%40unclaimed-sso.example&redirect_uri=${encodeURIComponent(`${base}/login/callback`)}`, navigate],
    ] as const) {
      const answer = await start(query, headers);
      expect([answer.status, answer.body.error?.code], JSON.stringify(headers)).toEqual([404, 'NOT_FOUND']);
    }
    const social = await get(`/api/v1/auth/oauth/google/start?workspace_id=${ws.id}`, navigate);
    expect(social.status).toBe(303);
    expect(new URL(social.headers.get('location') as string).pathname).toBe('/login/callback');
  });

  it('answers 400 to an email that is no address, rather than looking it up', async () => {
    const headers = { 'x-forwarded-for': someIp() };
    for (const email of ['not-an-address', 'a@b', '@acme-sso.example']) {
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=${encodeURIComponent(email)}`, { headers });
      expect([start.status, start.body.error.code, start.body.error.details], email).toEqual([
        400,
        'BAD_REQUEST',
        [{ path: 'email', message: 'must be an email address' }],
      ]);
    }
  });

  it('reads a SAML post before its path: one that is no form is 400, also at a path whose id is a malformed escape', async () => {
    for (const id of ['org_00000000000000000000000000', '%', '%E0%A4%A']) {
      const json = await call(app, 'POST', `/api/v1/auth/sso/saml/${id}/acs`, { body: [], headers: { 'x-forwarded-for': someIp() } });
      expect([json.status, json.body.error.code], id).toEqual([400, 'BAD_REQUEST']);
    }
    // A form with what it needs reaches the state check, which names nothing here.
    const form = await call(app, 'POST', '/api/v1/auth/sso/saml/%/acs', {
      raw: new URLSearchParams({ SAMLResponse: 'PHNhbWw+', RelayState: 'unknown' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': someIp() },
    });
    expect(form.status).toBe(401);
  });

  it('checks SAML metadata before saving it and accepts a signed response once; a tampered one is refused', async () => {
    const org = await organization('Initech', 'initech.example');
    const cookie = await openPortal(org);
    const key = fixtureKey('idp');
    const idpEntity = 'https://idp.initech.example/saml';
    const broken = await postForm('/portal/sso/saml', cookie, { metadata_xml: '<not-metadata/>' });
    expect(broken.status).toBe(400);
    const metadata = idpMetadataXml({ entityId: idpEntity, ssoUrl: 'https://idp.initech.example/sso', certs: [key.certBase64] });
    const saved = await postForm('/portal/sso/saml', cookie, { metadata_xml: metadata });
    expect(saved.status).toBe(200);
    const shown = await call(app, 'GET', `/api/v1/organizations/${org}/sso-connection`, { token: ws.apiKey });
    expect(shown.body.data).toMatchObject({ kind: 'saml', saml: { entity_id: idpEntity, sso_url: 'https://idp.initech.example/sso' } });
    expect(shown.body.data.saml.certificate_fingerprints[0]).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const spMetadata = await call(app, 'GET', `/api/v1/auth/sso/saml/${org}/metadata`);
    expect(spMetadata.body).toContain(shown.body.data.service_provider.acs_url);

    async function startSaml(appState = '') {
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=peter@initech.example&state=${appState}`);
      expect(start.status).toBe(302);
      const url = new URL(start.headers.get('location') as string);
      expect(`${url.origin}${url.pathname}`).toBe('https://idp.initech.example/sso');
      const request = inflateRawSync(Buffer.from(url.searchParams.get('SAMLRequest') as string, 'base64')).toString();
      return { relayState: url.searchParams.get('RelayState') as string, requestId: /ID="([^"]+)"/.exec(request)?.[1] as string };
    }
    const sp = { entityId: shown.body.data.service_provider.entity_id, acsUrl: shown.body.data.service_provider.acs_url };
    const respond = (relayState: string, xml: string) =>
      call(app, 'POST', `/api/v1/auth/sso/saml/${org}/acs`, {
        raw: new URLSearchParams({ SAMLResponse: toBase64(xml), RelayState: relayState }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });

    const good = await startSaml('saml-app-state');
    const signed = signSamlXml(
      samlResponseXml({
        sp,
        idp: { entity_id: idpEntity },
        inResponseTo: good.requestId,
        nameId: 'peter@initech.example',
        attributes: { firstName: 'Peter' },
      }),
      key,
      'assertion',
    );
    const accepted = await respond(good.relayState, signed);
    expect(accepted.status).toBe(303);
    expect(new URL(accepted.headers.get('location') as string).searchParams.get('state')).toBe('saml-app-state');
    const signedIn = await exchange(new URL(accepted.headers.get('location') as string));
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.data.user).toMatchObject({ email: 'peter@initech.example', metadata: { first_name: 'Peter' } });
    const replayed = await respond(good.relayState, signed);
    expect(replayed.status).toBe(401);

    const next = await startSaml();
    const tampered = signSamlXml(
      samlResponseXml({ sp, idp: { entity_id: idpEntity }, inResponseTo: next.requestId, nameId: 'peter@initech.example' }),
      key,
      'assertion',
    ).replace('peter@initech.example', 'admin@initech.example');
    const refused = await respond(next.relayState, tampered);
    expect(refused.status).toBe(303);
    expect(new URL(refused.headers.get('location') as string).searchParams.get('error')).toBe('access_denied');
  });
});
