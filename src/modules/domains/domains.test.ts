import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { signIn } from '../../../test/helpers/auth.ts';
import { TestDnsServer } from '../../../test/helpers/dns-server.ts';
import { call } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

/** Custom domains, verified against a real DNS server running in this process (DNS_SERVERS points at it). */
describe('custom domains', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  const dns = new TestDnsServer();
  let n = 0;

  beforeAll(async () => {
    app = await startTestApp({ DNS_SERVERS: await dns.start() });
    ws = await createWorkspace(app, 'Domains Co');
  });
  afterAll(async () => {
    await app.close();
    await dns.stop();
  });

  /** A domain name no other test (or earlier run on the same database) has used. */
  const fresh = (label = 'login') => `${label}-${process.pid}-${Date.now().toString(36)}-${n++}.example.com`;
  const add = (domain: string, workspace = ws) => call(app, 'POST', '/api/v1/domains', { token: workspace.apiKey, body: { domain } });
  const verify = (id: string, workspace = ws) => call(app, 'POST', `/api/v1/domains/${id}/verify`, { token: workspace.apiKey });

  it('adds a domain (201, pending, normalized) and answers the TXT record to publish', async () => {
    const domain = fresh();
    const res = await add(`  ${domain.toUpperCase()}. `);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      id: expect.stringMatching(/^dom_/),
      domain,
      status: 'pending',
      verification: {
        type: 'TXT',
        name: `_identity-verify.${domain}`,
        value: expect.stringMatching(/^identity-verify=[A-Za-z0-9_-]{32}$/),
      },
      failure_reason: null,
      checked_at: null,
      verified_at: null,
    });
    const got = await call(app, 'GET', `/api/v1/domains/${res.body.data.id}`, { token: ws.apiKey });
    expect(got.body.data).toEqual(res.body.data);
  });

  it('verifies a domain once its TXT record is published on the DNS server', async () => {
    const domain = fresh();
    const { id, verification } = (await add(domain)).body.data;
    dns.publishTxt(verification.name, 'v=spf1 -all');
    // A long record may arrive split into several strings: they are joined.
    dns.publishTxt(verification.name, [verification.value.slice(0, 10), verification.value.slice(10)]);
    const res = await verify(id);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, status: 'verified', failure_reason: null });
    expect(res.body.data.verified_at).toBeTruthy();
    expect(res.body.data.checked_at).toBeTruthy();
    expect(dns.asked).toContain(verification.name);
  });

  it('fails (retriably) when the record is missing or wrong, then verifies once it is right', async () => {
    const domain = fresh();
    const { id, verification } = (await add(domain)).body.data;
    const missing = await verify(id);
    expect(missing.status).toBe(200);
    expect(missing.body.data).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('No TXT record') });

    dns.publishTxt(verification.name, 'identity-verify=not-the-token');
    const wrong = await verify(id);
    expect(wrong.body.data).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('do not include') });

    dns.publishTxt(verification.name, verification.value);
    expect((await verify(id)).body.data.status).toBe('verified');

    // Re-checked later without the record: no longer verified.
    dns.remove(verification.name);
    const gone = await verify(id);
    expect(gone.body.data).toMatchObject({ status: 'failed', verified_at: null });

    const audit = await app.deps.orm.em
      .fork()
      .getConnection()
      .execute(
        `select outcome, details from audit_events where workspace_id = ? and event_type = 'domain.verify' and target_id = ? order by id`,
        [ws.id, id],
      );
    expect(audit.map((a) => a.outcome)).toEqual(['failure', 'failure', 'success', 'failure']);
  });

  it('does not accept another domain’s record, nor the right value at the wrong name', async () => {
    const [a, b] = [fresh('a'), fresh('b')];
    const first = (await add(a)).body.data;
    const second = (await add(b)).body.data;
    dns.publishTxt(first.verification.name, second.verification.value);
    dns.publishTxt(b, second.verification.value);
    expect((await verify(first.id)).body.data.status).toBe('failed');
    expect((await verify(second.id)).body.data.status).toBe('failed');
  });

  it('refuses a duplicate in the workspace (409), whatever its case or trailing dot', async () => {
    const domain = fresh();
    expect((await add(domain)).status).toBe(201);
    for (const again of [domain, `${domain.toUpperCase()}.`]) {
      const res = await add(again);
      expect([res.status, res.body.error.code]).toEqual([409, 'CONFLICT']);
    }
  });

  it('lets several workspaces claim a domain, but only one hold it verified', async () => {
    const domain = fresh('shared');
    const other = await createWorkspace(app, 'Rival');
    const mine = (await add(domain)).body.data;
    const theirs = (await add(domain, other)).body.data;
    expect(theirs.status).toBe('pending');
    expect(theirs.verification.value).not.toBe(mine.verification.value);

    dns.publishTxt(mine.verification.name, mine.verification.value);
    dns.publishTxt(theirs.verification.name, theirs.verification.value);
    expect((await verify(mine.id)).body.data.status).toBe('verified');
    const refused = await verify(theirs.id, other);
    expect([refused.status, refused.body.error.code]).toEqual([409, 'CONFLICT']);
    expect((await call(app, 'GET', `/api/v1/domains/${theirs.id}`, { token: other.apiKey })).body.data.status).toBe('pending');
    const third = await createWorkspace(app, 'Latecomer');
    expect((await add(domain, third)).status).toBe(409);

    // Once the holder lets go, the other workspace can verify it.
    expect((await call(app, 'DELETE', `/api/v1/domains/${mine.id}`, { token: ws.apiKey })).status).toBe(200);
    expect((await verify(theirs.id, other)).body.data.status).toBe('verified');
  });

  it('lists with pagination and a status filter', async () => {
    const other = await createWorkspace(app, 'Lister');
    const names = [fresh('c'), fresh('a'), fresh('b')];
    const ids: string[] = [];
    for (const d of names) ids.push((await add(d, other)).body.data.id);
    const record = (await call(app, 'GET', `/api/v1/domains/${ids[0]}`, { token: other.apiKey })).body.data.verification;
    dns.publishTxt(record.name, record.value);
    await verify(ids[0] as string, other);

    const page1 = await call(app, 'GET', '/api/v1/domains?per_page=2', { token: other.apiKey });
    expect(page1.status).toBe(200);
    expect(page1.body.meta).toEqual({ total: 3, page: 1, per_page: 2 });
    expect(page1.body.data.map((d: { domain: string }) => d.domain)).toEqual([...names].sort().slice(0, 2));
    const page2 = await call(app, 'GET', '/api/v1/domains?per_page=2&page=2', { token: other.apiKey });
    expect(page2.body.data).toHaveLength(1);
    const verified = await call(app, 'GET', '/api/v1/domains?status=verified', { token: other.apiKey });
    expect(verified.body.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    expect((await call(app, 'GET', '/api/v1/domains?status=bogus', { token: other.apiKey })).status).toBe(400);
  });

  it('deletes a domain (then 404), and answers 404 for unknown or malformed ids', async () => {
    const { id } = (await add(fresh())).body.data;
    const res = await call(app, 'DELETE', `/api/v1/domains/${id}`, { token: ws.apiKey });
    expect(res.body).toEqual({ data: { id, deleted: true } });
    for (const [method, path] of [
      ['GET', `/api/v1/domains/${id}`],
      ['POST', `/api/v1/domains/${id}/verify`],
      ['DELETE', `/api/v1/domains/${id}`],
      ['GET', '/api/v1/domains/not-an-id'],
      ['POST', '/api/v1/domains/dom_00000000000000000000000000/verify'],
    ] as const) {
      const r = await call(app, method, path, { token: ws.apiKey });
      expect([r.status, r.body.error.code], `${method} ${path}`).toEqual([404, 'NOT_FOUND']);
    }
  });

  it.each([
    ['a single label', 'localhost'],
    ['an IP-like name with a port', '1.2.3.4:80'],
    ['an IPv4 address', '1.2.3.4'],
    ['an IPv4 address with a trailing dot', '10.0.0.1.'],
    ['a name whose last label is all digits', 'example.123'],
    ['an IPv6 address', '2001:db8::1'],
    ['a bracketed IPv6 address', '[::1]'],
    ['an IPv4-mapped IPv6 address', '::ffff:1.2.3.4'],
    ['a URL', 'https://example.com/'],
    ['a label starting with a hyphen', '-bad.example.com'],
    ['a wildcard', '*.example.com'],
  ])('refuses %s (400)', async (_label, domain) => {
    const res = await add(domain);
    expect([res.status, res.body.error.code]).toEqual([400, 'BAD_REQUEST']);
    expect(res.body.error.details[0].path).toBe('domain');
  });

  it('refuses unknown body fields (400)', async () => {
    const res = await call(app, 'POST', '/api/v1/domains', { token: ws.apiKey, body: { domain: fresh(), status: 'verified' } });
    expect(res.status).toBe(400);
  });

  it('keeps domains per workspace: another workspace sees none and reaches none', async () => {
    const { id } = (await add(fresh())).body.data;
    const other = await createWorkspace(app, 'Nosy');
    const list = await call(app, 'GET', '/api/v1/domains?per_page=100', { token: other.apiKey });
    expect(list.body.data).toEqual([]);
    expect((await verify(id, other)).status).toBe(404);
    expect((await call(app, 'DELETE', `/api/v1/domains/${id}`, { token: other.apiKey })).status).toBe(404);
  });

  it('lets viewers list but not add, verify or delete; members do nothing', async () => {
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const tokens: Record<string, string> = {};
    for (const role of ['viewer', 'member']) {
      const email = uniqueEmail(role);
      const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'domains passphrase' } });
      if (role === 'viewer') {
        await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: user.body.data.id, role_id: viewerRole } });
      }
      tokens[role] = (await signIn(app, ws.id, email, 'domains passphrase')).accessToken;
    }
    const { id } = (await add(fresh())).body.data;
    expect((await call(app, 'GET', '/api/v1/domains', { token: tokens.viewer })).status).toBe(200);
    expect((await call(app, 'POST', '/api/v1/domains', { token: tokens.viewer, body: { domain: fresh() } })).status).toBe(403);
    expect((await call(app, 'POST', `/api/v1/domains/${id}/verify`, { token: tokens.viewer })).status).toBe(403);
    expect((await call(app, 'DELETE', `/api/v1/domains/${id}`, { token: tokens.viewer })).status).toBe(403);
    expect((await call(app, 'GET', '/api/v1/domains', { token: tokens.member })).status).toBe(403);
  });
});

describe('custom domains: an unreachable DNS server', () => {
  it('marks the check failed with the lookup error instead of failing the request', async () => {
    // Nothing listens on this port: the lookup is refused or times out.
    const app = await startTestApp({ DNS_SERVERS: '127.0.0.1:9' });
    try {
      const ws = await createWorkspace(app, 'Offline');
      const { id } = (await call(app, 'POST', '/api/v1/domains', { token: ws.apiKey, body: { domain: 'offline.example.com' } })).body.data;
      const res = await call(app, 'POST', `/api/v1/domains/${id}/verify`, { token: ws.apiKey });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'failed', failure_reason: expect.stringMatching(/lookup .* failed \(E[A-Z]+\)/) });
    } finally {
      await app.close();
    }
  });
});

describe('DNS_SERVERS', () => {
  it('takes comma-separated IP addresses, each with an optional port', () => {
    expect(loadConfig({ DNS_SERVERS: '127.0.0.1:5353, 8.8.8.8,[::1]:53,2001:db8::1' }).DNS_SERVERS).toEqual([
      '127.0.0.1:5353',
      '8.8.8.8',
      '[::1]:53',
      '2001:db8::1',
    ]);
    expect(loadConfig({}).DNS_SERVERS).toBeUndefined();
  });

  it.each(['dns.example.com', '127.0.0.1:99999', '300.1.1.1', '127.0.0.1:', ' , '])('refuses %j naming the variable', (value) => {
    expect(() => loadConfig({ DNS_SERVERS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ DNS_SERVERS: value })).toThrow(/DNS_SERVERS/);
  });
});
