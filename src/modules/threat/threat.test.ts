import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { login, signIn, someIp } from '../../../test/helpers/auth.ts';
import { call, graphql } from '../../../test/helpers/http.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';

const PASSWORD = 'threat passphrase';

describe('threat detection', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let viewerToken: string;
  let memberToken: string;

  async function newUser(label: string): Promise<{ id: string; email: string }> {
    const email = uniqueEmail(label);
    const res = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: PASSWORD } });
    return { id: res.body.data.id, email };
  }

  function loginAs(email: string, password: string, ip: string, userAgent = 'threat-test/1.0') {
    return call(app, 'POST', '/api/v1/auth/login', {
      headers: { 'x-tenant-id': ws.id, 'x-forwarded-for': ip, 'user-agent': userAgent },
      body: { email, password },
    });
  }

  async function latestScore(query = '') {
    const res = await call(app, 'GET', `/api/v1/threat/scores/recent?per_page=1${query}`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    return res.body.data[0];
  }

  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app);
    const roles = await call(app, 'GET', '/api/v1/roles', { token: ws.apiKey });
    const viewerRole = roles.body.data.find((r: { key: string }) => r.key === 'viewer').id;
    const viewer = await newUser('viewer');
    await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: viewer.id, role_id: viewerRole } });
    viewerToken = (await signIn(app, ws.id, viewer.email, PASSWORD)).accessToken;
    const member = await newUser('member');
    memberToken = (await signIn(app, ws.id, member.email, PASSWORD)).accessToken;
  });
  afterAll(() => app.close());

  it('raises the score with each failure from an IP, and blocks above the workspace threshold', async () => {
    const user = await newUser('target');
    const ip = someIp();
    const scores: number[] = [];
    for (let i = 0; i < 5; i++) {
      expect((await loginAs(user.email, `wrong ${i} password`, ip)).status).toBe(401);
      const row = await latestScore(`&ip=${ip}`);
      expect(row).toMatchObject({ email: user.email, user_id: user.id, outcome: 'failure', failure_reason: 'wrong_password' });
      scores.push(row.score);
    }
    expect(scores).toEqual([...scores].sort((a, b) => a - b));
    expect(scores[4] as number).toBeGreaterThan(scores[0] as number);
    const last = await latestScore(`&ip=${ip}`);
    expect(last.reasons.map((r: { code: string }) => r.code)).toContain('failed_attempts_from_ip');
    expect(last.reasons.find((r: { code: string }) => r.code === 'failed_attempts_from_ip').count).toBe(4);

    // Blocking is off until the workspace turns it on: the right password gets in, with a score that says why.
    const allowed = await loginAs(user.email, PASSWORD, ip);
    expect(allowed.status).toBe(200);
    const allowedRow = await latestScore(`&ip=${ip}`);
    expect(allowedRow).toMatchObject({ outcome: 'allowed', threshold: 80, level: 'medium' });
    expect(allowedRow.score).toBeGreaterThan(scores[4] as number);

    const patched = await call(app, 'PATCH', '/api/v1/threat/settings', {
      token: ws.apiKey,
      body: { blocking_enabled: true, block_threshold: 40 },
    });
    expect(patched.body.data).toMatchObject({ block_threshold: 40, blocking_enabled: true });

    const blocked = await loginAs(user.email, PASSWORD, ip);
    expect([blocked.status, blocked.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(blocked.body.data).toBeUndefined();
    const blockedRow = await latestScore(`&ip=${ip}`);
    expect(blockedRow).toMatchObject({ outcome: 'blocked', threshold: 40, level: 'high' });
    expect(blockedRow.score).toBeGreaterThanOrEqual(40);

    const audited = await call(app, 'GET', `/api/v1/audit/events/?event_type=auth.login&outcome=failure&target_id=${user.id}&per_page=1`, {
      token: ws.apiKey,
    });
    expect(audited.body.data[0].details).toMatchObject({ reason: 'risk_blocked', risk_score: blockedRow.score, threshold: 40 });
    expect(audited.body.data[0].details.risk_reasons).toContain('failed_attempts_from_ip');

    // Another address has no failures behind it: the same account signs in.
    expect((await loginAs(user.email, PASSWORD, someIp())).status).toBe(200);

    await call(app, 'PATCH', '/api/v1/threat/settings', { token: ws.apiKey, body: { blocking_enabled: false } });
    expect((await loginAs(user.email, PASSWORD, ip)).status).toBe(200);
    await call(app, 'PATCH', '/api/v1/threat/settings', { token: ws.apiKey, body: { block_threshold: 80 } });
  });

  it('scores but does not block until the workspace turns blocking on', async () => {
    const fresh = await createWorkspace(app, 'Unconfigured');
    const settings = await call(app, 'GET', '/api/v1/threat/settings', { token: fresh.apiKey });
    expect(settings.body.data).toMatchObject({ blocking_enabled: false, block_threshold: 80 });
    const ip = someIp();
    const attempt = (email: string, password: string, from = ip) =>
      call(app, 'POST', '/api/v1/auth/login', { headers: { 'x-tenant-id': fresh.id, 'x-forwarded-for': from }, body: { email, password } });
    // What a test suite or an office behind one address does within the hour: failures over many
    // accounts, and a try at an account locked meanwhile.
    for (let i = 0; i < 6; i++) expect((await attempt(uniqueEmail('nobody'), 'not the password')).status).toBe(401);
    const locked = uniqueEmail('locked');
    await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email: locked, password: PASSWORD } });
    const elsewhere = someIp();
    for (let i = 0; i < 10; i++) await attempt(locked, `wrong ${i} password`, elsewhere);
    expect((await attempt(locked, PASSWORD)).body.error.code).toBe('ACCOUNT_LOCKED');
    const email = uniqueEmail('newcomer');
    await call(app, 'POST', '/api/v1/users', { token: fresh.apiKey, body: { email, password: PASSWORD } });
    const signedIn = await attempt(email, PASSWORD);
    expect(signedIn.status).toBe(200);
    const scored = await call(app, 'GET', `/api/v1/threat/scores/recent?per_page=1&ip=${ip}`, { token: fresh.apiKey });
    expect(scored.body.data[0]).toMatchObject({ email, outcome: 'allowed', threshold: 80 });
    expect(scored.body.data[0].score).toBeGreaterThanOrEqual(80);
  });

  it('flags a new IP and a new user agent for an account that signed in before', async () => {
    const user = await newUser('traveller');
    const home = someIp();
    expect((await loginAs(user.email, PASSWORD, home, 'browser-a')).status).toBe(200);
    expect((await latestScore(`&user_id=${user.id}`)).score).toBe(0);
    expect((await loginAs(user.email, PASSWORD, home, 'browser-a')).status).toBe(200);
    expect((await latestScore(`&user_id=${user.id}`)).reasons).toEqual([]);
    expect((await loginAs(user.email, PASSWORD, someIp(), 'browser-b')).status).toBe(200);
    const away = await latestScore(`&user_id=${user.id}`);
    expect(away.reasons.map((r: { code: string }) => r.code).sort()).toEqual(['new_ip', 'new_user_agent']);
    expect(away.score).toBe(25);
  });

  it('flags many accounts tried from one IP and probing of locked accounts', async () => {
    const ip = someIp();
    for (let i = 0; i < 4; i++) expect((await loginAs(uniqueEmail('spray'), 'password guess', ip)).status).toBe(401);
    const sprayed = await latestScore(`&ip=${ip}`);
    expect(sprayed.failure_reason).toBe('unknown_email');
    expect(sprayed.reasons.find((r: { code: string }) => r.code === 'many_accounts_from_ip')).toMatchObject({ count: 3, points: 10 });

    const locked = await newUser('locked');
    for (let i = 0; i < 10; i++) await login(app, ws.id, locked.email, `wrong ${i} password`);
    const probe = someIp();
    expect((await loginAs(locked.email, PASSWORD, probe)).body.error.code).toBe('ACCOUNT_LOCKED');
    expect(await latestScore(`&ip=${probe}`)).toMatchObject({ failure_reason: 'account_locked', outcome: 'failure' });
    expect((await loginAs(locked.email, 'another guess', probe)).status).toBe(401);
    const probing = await latestScore(`&ip=${probe}`);
    expect(probing.reasons.map((r: { code: string }) => r.code)).toContain('locked_account_probing');
    expect(probing.reasons.map((r: { code: string }) => r.code)).toContain('velocity');
  });

  it('summarizes the last 24 hours', async () => {
    const res = await call(app, 'GET', '/api/v1/threat/stats', { token: viewerToken });
    expect(res.status).toBe(200);
    const stats = res.body.data;
    expect(stats.attempts).toBe(stats.successes + stats.failures + stats.blocked);
    expect(stats.failures).toBeGreaterThanOrEqual(5 + 4 + 12);
    expect(stats.blocked).toBe(1);
    expect(stats.high_risk).toBeGreaterThanOrEqual(1);
    expect(stats.locked_accounts).toBe(1);
    expect(stats.top_ips.length).toBeGreaterThan(0);
    expect(stats.top_ips.length).toBeLessThanOrEqual(5);
    expect(stats.top_ips[0].attempts).toBeGreaterThanOrEqual(stats.top_ips.at(-1).attempts);
    expect(new Date(stats.until).getTime() - new Date(stats.since).getTime()).toBe(86_400_000);

    app.clock.advance(25 * 3600 * 1000);
    const later = await call(app, 'GET', '/api/v1/threat/stats', { token: ws.apiKey });
    expect(later.body.data).toMatchObject({ attempts: 0, failures: 0, blocked: 0, top_ips: [] });
    const recent = await call(app, 'GET', '/api/v1/threat/scores/recent', { token: ws.apiKey });
    expect(recent.body.meta.total).toBe(0);
    const wider = await call(app, 'GET', `/api/v1/threat/scores/recent?since=${encodeURIComponent(stats.since)}&outcome=blocked`, {
      token: ws.apiKey,
    });
    expect(wider.body.meta.total).toBe(1);
    app.clock.advance(-25 * 3600 * 1000);
  });

  it('filters recent scores and reports them over GraphQL', async () => {
    const high = await call(app, 'GET', '/api/v1/threat/scores/recent?min_score=40&per_page=100', { token: ws.apiKey });
    expect(high.body.data.length).toBeGreaterThan(0);
    for (const row of high.body.data) expect(row.score).toBeGreaterThanOrEqual(40);
    // A number in a query string is plain decimal digits, as for page and per_page.
    for (const odd of ['4e1', '0x28', '%2B40', '%2040']) {
      const res = await call(app, 'GET', `/api/v1/threat/scores/recent?min_score=${odd}`, { token: ws.apiKey });
      expect([res.status, res.body.error?.code], odd).toEqual([400, 'BAD_REQUEST']);
    }
    const gql = await graphql(
      app,
      `
        {
          threatStats {
            attempts
            blocked
            highRisk
            lockedAccounts
            topIps {
              ip
              attempts
            }
          }
          riskScores(outcome: blocked) {
            data {
              score
              level
              outcome
              reasons {
                code
                points
                count
              }
            }
            meta {
              total
            }
          }
        }
      `,
      {},
      viewerToken,
    );
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data.threatStats.blocked).toBe(1);
    expect(gql.body.data.riskScores.meta.total).toBe(1);
    expect(gql.body.data.riskScores.data[0]).toMatchObject({ outcome: 'blocked', level: 'high' });
  });

  it('lets viewers read, not change; members neither; validates settings', async () => {
    expect((await call(app, 'GET', '/api/v1/threat/settings', { token: viewerToken })).body.data.block_threshold).toBe(80);
    expect((await call(app, 'GET', '/api/v1/threat/scores/recent', { token: viewerToken })).status).toBe(200);
    const viewerPatch = await call(app, 'PATCH', '/api/v1/threat/settings', { token: viewerToken, body: { block_threshold: 10 } });
    expect(viewerPatch.status).toBe(403);
    for (const path of ['/api/v1/threat/stats', '/api/v1/threat/scores/recent', '/api/v1/threat/settings']) {
      expect((await call(app, 'GET', path, { token: memberToken })).status, path).toBe(403);
    }
    // Nothing to change answers the settings as they are and writes nothing (the no-op PATCH rule).
    const untouched = await call(app, 'PATCH', '/api/v1/threat/settings', { token: ws.apiKey, body: {} });
    expect([untouched.status, untouched.body.data.block_threshold]).toEqual([200, 80]);
    for (const body of [
      { block_threshold: 0 },
      { block_threshold: 101 },
      { block_threshold: 50.5 },
      { blocking_enabled: 'no' },
      { other: 1 },
    ]) {
      const res = await call(app, 'PATCH', '/api/v1/threat/settings', { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const audit = await call(app, 'GET', '/api/v1/audit/events/?event_type=threat.settings_update&outcome=success', { token: ws.apiKey });
    expect(audit.body.meta.total).toBe(3);
    // The viewer's 403 and the five invalid bodies are recorded as refused.
    const refused = await call(app, 'GET', '/api/v1/audit/events/?event_type=threat.settings_update&outcome=failure', { token: ws.apiKey });
    expect(refused.body.meta.total).toBe(6);
    expect(audit.body.data.at(-1).details.block_threshold).toEqual({ from: 80, to: 40 });
  });

  it('keeps each workspace’s scores and settings to itself', async () => {
    const other = await createWorkspace(app, 'Other');
    await signIn(app, other.id, other.owner.email, other.owner.password);
    const scores = await call(app, 'GET', '/api/v1/threat/scores/recent?per_page=100', { token: other.apiKey });
    expect(scores.body.data.map((row: { email: string }) => row.email)).toEqual([other.owner.email]);
    expect((await call(app, 'GET', '/api/v1/threat/stats', { token: other.apiKey })).body.data.blocked).toBe(0);
  });
});
