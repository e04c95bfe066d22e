import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { decodeJwt } from 'jose';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { drainEarlierEvents } from '../../../test/helpers/events.ts';
import { login } from '../../../test/helpers/auth.ts';
import { Browser, formAction, hiddenInput } from '../../../test/helpers/browser.ts';
import { call } from '../../../test/helpers/http.ts';
import { fixtureKey, idpMetadataXml } from '../../../test/helpers/saml.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from '../../../test/helpers/workspace.ts';
import { postWebhook } from './sender.ts';
import { authenticatorOf, codeAt } from '../../../test/helpers/authenticator.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on a local port: records every request, answers `status`. */
async function startReceiver() {
  const received: Received[] = [];
  const state = { status: 200 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(state.status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    state,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A receiver that holds every request unanswered until the test answers them all. */
async function startHoldingReceiver() {
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const answerAll = () => {
    for (const res of held.splice(0)) res.writeHead(200).end();
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
    held,
    answerAll,
    async close() {
      answerAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function verify(secret: string, request: Received) {
  const headers = {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  };
  return new Webhook(secret).verify(request.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

describe('webhooks: endpoints, signed deliveries, retries', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let receiver: Receiver;

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app, 'Hooks');
    receiver = await startReceiver();
    await drainEarlierEvents(app);
  });
  afterAll(async () => {
    await app.close();
    await receiver.close();
  });

  async function endpoint(body: Record<string, unknown> = {}) {
    const res = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url: receiver.url, ...body } });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; secret: string };
  }

  it('tells of a sign-in once its session exists (user.signed_in, written by the session statement); a refused one tells nothing', async () => {
    const created = await endpoint({ event_types: ['user.signed_in'] });
    receiver.received.length = 0;
    expect((await login(app, ws.id, ws.owner.email, 'not the passphrase')).status).toBe(401);
    const signedIn = await login(app, ws.id, ws.owner.email, ws.owner.password);
    expect(signedIn.status).toBe(200);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    const payload = verify(created.secret, receiver.received[0] as Received);
    expect(payload).toMatchObject({
      type: 'user.signed_in',
      data: { user_id: ws.owner.id, session_id: decodeJwt(signedIn.body.data.access_token).sid, method: 'password' },
    });
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('tells of a sign-in on the hosted OAuth page too (user.signed_in with the client, no session of this service)', async () => {
    const created = await endpoint({ event_types: ['user.signed_in'] });
    const callback = 'https://rp.example.com/hooked/callback';
    const client = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Hooked RP', type: 'web', redirect_uris: [callback] },
    });
    expect(client.status).toBe(201);
    receiver.received.length = 0;
    const browser = new Browser(app.url);
    const query = new URLSearchParams({ client_id: client.body.data.id, response_type: 'code', redirect_uri: callback, scope: 'openid' });
    const page = await browser.go(`${app.url}/oauth/authorize?${query.toString()}`);
    expect(page.status, page.body).toBe(200);
    const wrong = await browser.go(formAction(page.body, 'Sign in'), { email: ws.owner.email, password: 'not the passphrase' });
    expect(wrong.status).toBe(401);
    const done = await browser.go(formAction(page.body, 'Sign in'), { email: ws.owner.email, password: ws.owner.password });
    expect(new URL(done.location as string).searchParams.get('code')).toBeTruthy();
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    expect(verify(created.secret, receiver.received[0] as Received)).toMatchObject({
      type: 'user.signed_in',
      data: { user_id: ws.owner.id, session_id: null, method: 'password', client_id: client.body.data.id },
    });

    // With a second factor: nothing at the password step, one event (method mfa) once the code is right.
    const email = uniqueEmail('hosted-mfa');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'hosted mfa passphrase' } });
    const session = await login(app, ws.id, email, 'hosted mfa passphrase');
    const token = session.body.data.access_token as string;
    const enrolled = await call(app, 'POST', '/api/v1/mfa/factors/totp', { token, body: { name: 'Phone' } });
    const totp = authenticatorOf(enrolled.body.data.otpauth_uri);
    const step = (offset: number) => {
      const now = app.clock.now().getTime();
      app.clock.set(new Date(now - (now % 30_000) + offset * 30_000 + 5_000));
      return codeAt(totp, app.clock);
    };
    try {
      const factorId = enrolled.body.data.factor.id as string;
      expect((await call(app, 'POST', `/api/v1/mfa/factors/${factorId}/verify`, { token, body: { code: step(1) } })).status).toBe(200);
      await app.deps.webhooks.tick();
      receiver.received.length = 0;
      const second = new Browser(app.url);
      const challenge = await second.go(formAction((await second.go(`${app.url}/oauth/authorize?${query.toString()}`)).body, 'Sign in'), {
        email,
        password: 'hosted mfa passphrase',
      });
      expect(challenge.status).toBe(200);
      await app.deps.webhooks.tick();
      expect(receiver.received).toHaveLength(0);
      const answered = await second.go(formAction(challenge.body, 'Verify'), {
        mfa_token: hiddenInput(challenge.body, 'mfa_token'),
        code: step(2),
      });
      expect(answered.location, answered.body).toBeDefined();
      await app.deps.webhooks.tick();
    } finally {
      app.clock.set(new Date());
    }
    expect(receiver.received.map((r) => verify(created.secret, r))).toEqual([
      expect.objectContaining({
        type: 'user.signed_in',
        data: { user_id: user.body.data.id, session_id: null, method: 'mfa', client_id: client.body.data.id },
      }),
    ]);
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('tells of a lockout and of its end as a status change (user.updated), as of an admin’s lock', async () => {
    const created = await endpoint({ event_types: ['user.updated'] });
    const email = uniqueEmail('lockout');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'lockout passphrase' } });
    receiver.received.length = 0;
    for (let i = 0; i < 9; i++) expect((await login(app, ws.id, email, 'not the passphrase')).status).toBe(401);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(0);
    expect((await login(app, ws.id, email, 'not the passphrase')).status).toBe(401);
    expect((await login(app, ws.id, email, 'not the passphrase')).status).toBe(401);
    expect((await call(app, 'GET', `/api/v1/users/${user.body.data.id}`, { token: ws.apiKey })).body.data.status).toBe('locked');
    await app.deps.webhooks.tick();
    expect(receiver.received.map((r) => verify(created.secret, r))).toEqual([
      expect.objectContaining({ type: 'user.updated', data: { id: user.body.data.id, email, changes: ['status'] } }),
    ]);

    receiver.received.length = 0;
    app.clock.advance(16 * 60 * 1000);
    try {
      expect((await login(app, ws.id, email, 'lockout passphrase')).status).toBe(200);
      await app.deps.webhooks.tick();
      // Signed at the app's clock, a quarter of an hour ahead: the verifier's tolerance would refuse it.
      expect(receiver.received.map((r) => JSON.parse(r.body))).toEqual([
        expect.objectContaining({ type: 'user.updated', data: { id: user.body.data.id, email, changes: ['status'] } }),
      ]);
    } finally {
      app.clock.set(new Date());
    }
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('tells each user who held a deleted role that it was taken (role.revoked); one whose grant had ended hears of its lapse', async () => {
    const created = await endpoint({ event_types: ['role.revoked'] });
    const role = await call(app, 'POST', '/api/v1/roles', {
      token: ws.apiKey,
      body: { name: `Temp ${Date.now()}`, permissions: ['users:read'] },
    });
    expect(role.status).toBe(201);
    const holders: string[] = [];
    const until = new Date(app.clock.now().getTime() + 60_000).toISOString();
    for (const expiresAt of [null, until]) {
      const user = await call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        body: { email: uniqueEmail('held'), password: 'held passphrase' },
      });
      const assigned = await call(app, 'POST', '/api/v1/roles/assign', {
        token: ws.apiKey,
        body: { user_id: user.body.data.id, role_id: role.body.data.id, expires_at: expiresAt },
      });
      expect(assigned.status).toBe(201);
      holders.push(user.body.data.id);
    }
    receiver.received.length = 0;
    app.clock.advance(2 * 60_000);
    try {
      expect((await call(app, 'DELETE', `/api/v1/roles/${role.body.data.id}`, { token: ws.apiKey })).status).toBe(200);
      await app.deps.webhooks.tick();
    } finally {
      app.clock.set(new Date());
    }
    // The ended grant is told once, as its lapse: by the background round or, if it had not come yet, by the delete.
    expect(receiver.received.map((r) => JSON.parse(r.body))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: 'role.revoked',
          data: { user_id: holders[0], role_id: role.body.data.id, role: role.body.data.key, reason: 'role_deleted' },
        }),
        expect.objectContaining({
          type: 'role.revoked',
          data: { user_id: holders[1], role_id: role.body.data.id, role: role.body.data.key, reason: 'expired', expires_at: until },
        }),
      ]),
    );
    expect(receiver.received).toHaveLength(2);
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('tells of an organization created, updated, given an SSO connection in the Admin Portal and deleted', async () => {
    const types = ['organization.created', 'organization.updated', 'sso_connection.saved', 'organization.deleted'];
    const created = await endpoint({ event_types: types });
    receiver.received.length = 0;
    const org = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Hooked Co', domains: ['hooked.example'] },
    });
    expect(org.status).toBe(201);
    const id = org.body.data.id as string;
    await call(app, 'PATCH', `/api/v1/organizations/${id}`, { token: ws.apiKey, body: { domains: ['hooked.example', 'hooked.test'] } });
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', { token: ws.apiKey, body: { organization_id: id } });
    const opened = await call(app, 'GET', `/portal?${new URL(link.body.data.link).searchParams}`);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const metadata = idpMetadataXml({
      entityId: 'https://idp.hooked.example/saml',
      ssoUrl: 'https://idp.hooked.example/sso',
      certs: [fixtureKey('idp').certBase64],
    });
    const saved = await call(app, 'POST', '/portal/sso/saml', {
      raw: new URLSearchParams({ metadata_xml: metadata }).toString(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(saved.status).toBe(200);
    const connection = await call(app, 'GET', `/api/v1/organizations/${id}/sso-connection`, { token: ws.apiKey });
    expect((await call(app, 'DELETE', `/api/v1/organizations/${id}`, { token: ws.apiKey })).status).toBe(200);
    await app.deps.webhooks.tick();
    const sso = { enabled: true, jit_provisioning: true, default_role: 'member' };
    // Deliveries run side by side, so they may arrive in any order.
    expect(receiver.received).toHaveLength(4);
    expect(receiver.received.map((r) => verify(created.secret, r))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'organization.created', data: { id, name: 'Hooked Co', domains: ['hooked.example'], sso } }),
        expect.objectContaining({
          type: 'organization.updated',
          data: { id, name: 'Hooked Co', domains: ['hooked.example', 'hooked.test'], sso },
        }),
        expect.objectContaining({
          type: 'sso_connection.saved',
          data: { id: connection.body.data.id, organization_id: id, kind: 'saml' },
        }),
        expect.objectContaining({ type: 'organization.deleted', data: { id, name: 'Hooked Co' } }),
      ]),
    );
    const listed = await call(app, 'GET', '/api/v1/webhooks/event-types?per_page=100', { token: ws.apiKey });
    expect(listed.body.data.map((t: { type: string }) => t.type)).toEqual(expect.arrayContaining(types));
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('deletes an endpoint once when two deletes arrive together: one 200, the others 404, one audit row', async () => {
    const { id } = await endpoint();
    const answers = await Promise.all([1, 2, 3].map(() => call(app, 'DELETE', `/api/v1/webhooks/${id}`, { token: ws.apiKey })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 404, 404]);
    const audit = await call(app, 'GET', `/api/v1/audit/events/?event_type=webhook.delete&outcome=success&target_id=${id}`, {
      token: ws.apiKey,
    });
    expect(audit.body.meta.total).toBe(1);
  });

  it('lists the subscribable event types', async () => {
    const res = await call(app, 'GET', '/api/v1/webhooks/event-types', { token: ws.apiKey });
    expect(res.status).toBe(200);
    const types = res.body.data.map((t: { type: string }) => t.type);
    expect(types).toEqual(
      expect.arrayContaining(['user.created', 'user.deleted', 'role.assigned', 'access_request.approved', 'webhook.test']),
    );
    expect(res.body.data[0]).toEqual({ type: expect.any(String), description: expect.any(String) });
  });

  it('lists event types a page at a time with meta; bad paging is 400', async () => {
    const all = await call(app, 'GET', '/api/v1/webhooks/event-types?per_page=100', { token: ws.apiKey });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBeGreaterThan(1);
    expect(all.body.meta).toEqual({ total: all.body.data.length, page: 1, per_page: 100 });
    expect(all.body.data[0].type).toBe('user.created');
    const second = await call(app, 'GET', '/api/v1/webhooks/event-types?page=2&per_page=1', { token: ws.apiKey });
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual([all.body.data[1]]);
    expect(second.body.meta).toEqual({ total: all.body.data.length, page: 2, per_page: 1 });
    const past = await call(app, 'GET', `/api/v1/webhooks/event-types?page=${all.body.data.length + 1}&per_page=1`, { token: ws.apiKey });
    expect(past.body).toEqual({ data: [], meta: { total: all.body.data.length, page: all.body.data.length + 1, per_page: 1 } });
    for (const query of ['page=0', 'per_page=101', 'per_page=abc', 'page=abc']) {
      const bad = await call(app, 'GET', `/api/v1/webhooks/event-types?${query}`, { token: ws.apiKey });
      expect([bad.status, bad.body.error.code], query).toEqual([400, 'BAD_REQUEST']);
    }
  });

  it('delivers a committed event signed per Standard Webhooks, and shows the secret only once', async () => {
    const created = await endpoint({ event_types: ['user.created'], description: 'CRM sync' });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await call(app, 'GET', '/api/v1/webhooks/', { token: ws.apiKey });
    expect(JSON.stringify(listed.body)).not.toContain(created.secret);
    expect(listed.body.data[0]).toMatchObject({ id: created.id, url: receiver.url, event_types: ['user.created'], enabled: true });

    receiver.received.length = 0;
    const email = uniqueEmail('hooked');
    const user = await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, password: 'hooked passphrase' } });
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    const payload = verify(created.secret, receiver.received[0] as Received);
    expect(payload).toMatchObject({ type: 'user.created', data: { id: user.body.data.id, email } });
    expect(JSON.stringify(payload)).not.toMatch(/password|hooked passphrase/);

    const deliveries = await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey });
    expect(deliveries.body.data[0]).toMatchObject({
      id: receiver.received[0]?.headers['webhook-id'],
      endpoint_id: created.id,
      event_type: 'user.created',
      status: 'succeeded',
      attempts: 1,
      response_status: 200,
      next_attempt_at: null,
    });
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('fans events out to every endpoint that wants them, many events in one round, each delivery its own id', async () => {
    const first = await endpoint({ event_types: ['user.created'] });
    const second = await endpoint({ event_types: ['user.created', 'user.deleted'] });
    const unrelated = await endpoint({ event_types: ['role.assigned'] });
    receiver.received.length = 0;
    const before = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const user = await call(app, 'POST', '/api/v1/users', {
        token: ws.apiKey,
        body: { email: uniqueEmail('fanned'), password: 'fanned passphrase' },
      });
      ids.push(user.body.data.id);
    }
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(6);
    const deliveryIds = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(deliveryIds).size).toBe(6);
    for (const id of deliveryIds) expect(id).toMatch(/^dlv_[0-9a-hjkmnp-tv-z]{26}$/);
    for (const [secret, url] of [
      [first.secret, first.id],
      [second.secret, second.id],
    ] as const) {
      const deliveries = await call(app, 'GET', `/api/v1/webhooks/${url}/deliveries`, { token: ws.apiKey });
      expect(deliveries.body.data).toHaveLength(3);
      const mine = receiver.received.filter((r) => deliveries.body.data.some((d: { id: string }) => d.id === r.headers['webhook-id']));
      const payloads = mine.map((r) => verify(secret, r));
      expect(payloads.map((p) => p.data.id).sort()).toEqual([...ids].sort());
      for (const payload of payloads) {
        expect(payload.type).toBe('user.created');
        expect(payload.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(Date.parse(payload.timestamp)).toBeGreaterThanOrEqual(before - 1000);
        expect(Date.parse(payload.timestamp)).toBeLessThanOrEqual(Date.now());
      }
    }
    const none = await call(app, 'GET', `/api/v1/webhooks/${unrelated.id}/deliveries`, { token: ws.apiKey });
    expect(none.body.data).toHaveLength(0);
    for (const created of [first, second, unrelated]) await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('retries a failing receiver on the backoff schedule with the same webhook-id, then redelivers on demand', async () => {
    const created = await endpoint({ event_types: ['webhook.test'] });
    receiver.received.length = 0;
    receiver.state.status = 500;
    const test = await call(app, 'POST', `/api/v1/webhooks/${created.id}/test`, { token: ws.apiKey });
    expect(test.status).toBe(201);
    await app.deps.webhooks.tick();
    let delivery = (await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey })).body.data[0];
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, response_status: 500 });
    expect(new Date(delivery.next_attempt_at).getTime() - app.clock.now().getTime()).toBe(5_000);

    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1); // not due yet
    app.clock.advance(5_000);
    await app.deps.webhooks.tick();
    receiver.state.status = 204;
    app.clock.advance(30_000);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id']))).toEqual(new Set([test.body.data.id]));
    for (const request of receiver.received) expect(verify(created.secret, request).type).toBe('webhook.test');
    delivery = (await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey })).body.data[0];
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 3, response_status: 204 });
    expect(delivery.last_attempts.map((a: { response_status: number }) => a.response_status)).toEqual([204, 500, 500]);

    const again = await call(app, 'POST', `/api/v1/webhooks/deliveries/${delivery.id}/redeliver`, { token: ws.apiKey });
    expect(again.status).toBe(200);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(4);
    expect(receiver.received[3]?.headers['webhook-id']).toBe(delivery.id);
  });

  it('sends nothing to a disabled endpoint, retries included, and resumes once it is enabled again', async () => {
    const created = await endpoint({ event_types: ['webhook.test'] });
    receiver.received.length = 0;
    receiver.state.status = 500;
    await call(app, 'POST', `/api/v1/webhooks/${created.id}/test`, { token: ws.apiKey });
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey, body: { enabled: false } });
    receiver.state.status = 200;
    app.clock.advance(5_000);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    const waiting = (await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey })).body.data[0];
    expect(waiting).toMatchObject({ status: 'pending', attempts: 1 });
    await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey, body: { enabled: true } });
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(2);
    const sent = (await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey })).body.data[0];
    expect(sent).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('refuses a test event and a redelivery to a disabled endpoint 409 CONFLICT, writing nothing', async () => {
    const created = await endpoint({ event_types: ['webhook.test'] });
    receiver.received.length = 0;
    receiver.state.status = 200;
    expect((await call(app, 'POST', `/api/v1/webhooks/${created.id}/test`, { token: ws.apiKey })).status).toBe(201);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    const deliveries = () => call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey });
    const sent = (await deliveries()).body.data[0];
    expect(sent).toMatchObject({ status: 'succeeded', attempts: 1 });

    await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey, body: { enabled: false } });
    const test = await call(app, 'POST', `/api/v1/webhooks/${created.id}/test`, { token: ws.apiKey });
    expect([test.status, test.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(test.body.error.message).toContain('disabled; enable it first');
    const again = await call(app, 'POST', `/api/v1/webhooks/deliveries/${sent.id}/redeliver`, { token: ws.apiKey });
    expect([again.status, again.body.error?.code]).toEqual([409, 'CONFLICT']);
    expect(again.body.error.message).toContain('disabled; enable it first');
    await app.deps.webhooks.tick();
    const after = await deliveries();
    expect(after.body.data).toEqual([expect.objectContaining({ id: sent.id, status: 'succeeded', attempts: 1, next_attempt_at: null })]);

    await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey, body: { enabled: true } });
    expect((await call(app, 'POST', `/api/v1/webhooks/deliveries/${sent.id}/redeliver`, { token: ws.apiKey })).status).toBe(200);
    await app.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(2);
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });

  it('refuses to redeliver a delivery while its attempt is in flight, so it is never sent twice at once', async () => {
    const { url: slowUrl, held, answerAll, close: closeSlow } = await startHoldingReceiver();
    const slow = await endpoint({ url: slowUrl, event_types: ['webhook.test'] });
    // Far ahead, so that only this app's dispatcher finds the delivery due (see below).
    app.clock.advance(400 * 24 * 60 * 60 * 1000);
    try {
      const test = await call(app, 'POST', `/api/v1/webhooks/${slow.id}/test`, { token: ws.apiKey });
      expect(test.status).toBe(201);
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 8_000 });

      const during = await call(app, 'POST', `/api/v1/webhooks/deliveries/${test.body.data.id}/redeliver`, { token: ws.apiKey });
      expect([during.status, during.body.error?.code]).toEqual([409, 'CONFLICT']);
      expect(during.body.error.message).toContain('being sent right now');
      // A round (the timer's, a commit's) while the send is in flight leaves the delivery alone: the
      // kicked round and one more after it, both ended, have started no second send (a claim counts
      // from the moment it is made, before its request reaches the receiver).
      app.deps.webhooks.kick();
      await app.deps.webhooks.roundNow();
      expect(app.deps.webhooks.sendingTo(slow.id)).toBe(1);
      expect(held).toHaveLength(1);

      answerAll();
      await app.deps.webhooks.tick();
      const after = await call(app, 'POST', `/api/v1/webhooks/deliveries/${test.body.data.id}/redeliver`, { token: ws.apiKey });
      expect(after.status).toBe(200);
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 8_000 });
      answerAll();
      await app.deps.webhooks.tick();
      const deliveries = await call(app, 'GET', `/api/v1/webhooks/${slow.id}/deliveries`, { token: ws.apiKey });
      expect(deliveries.body.data).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 2 })]);
    } finally {
      await closeSlow();
      app.clock.set(new Date());
      await call(app, 'DELETE', `/api/v1/webhooks/${slow.id}`, { token: ws.apiKey });
    }
  });

  it('gives up after the last retry: failed (each tick makes its attempt, though a background round starts beside it)', async () => {
    const created = await endpoint({ event_types: ['webhook.test'] });
    receiver.state.status = 503;
    await call(app, 'POST', `/api/v1/webhooks/${created.id}/test`, { token: ws.apiKey });
    for (const wait of [0, 5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000]) {
      app.clock.advance(wait);
      // As the dispatcher's one-second timer may at any moment: a round begun beside the tick's could
      // claim the due attempt and make it after tick returned, once the clock had moved on.
      const ticked = app.deps.webhooks.tick();
      app.deps.webhooks.kick();
      await ticked;
    }
    const delivery = (await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: ws.apiKey })).body.data[0];
    expect(delivery).toMatchObject({ status: 'failed', attempts: 7, next_attempt_at: null });
    receiver.state.status = 200;
  });

  it('a receiver that does not answer holds four sends at most, and none of another endpoint', async () => {
    const { url: slowUrl, held, answerAll, close: closeSlow } = await startHoldingReceiver();
    const slowEndpoint = await endpoint({ url: slowUrl });
    const fastEndpoint = await endpoint();
    receiver.received.length = 0;
    // Far ahead, so that only this app's dispatcher finds these deliveries due (every test app's
    // dispatcher works the shared database).
    app.clock.advance(400 * 24 * 60 * 60 * 1000);
    try {
      for (let i = 0; i < 6; i++) {
        expect((await call(app, 'POST', `/api/v1/webhooks/${slowEndpoint.id}/test`, { token: ws.apiKey })).status).toBe(201);
      }
      await vi.waitFor(() => expect(held).toHaveLength(4), { timeout: 8_000 });
      expect((await call(app, 'POST', `/api/v1/webhooks/${fastEndpoint.id}/test`, { token: ws.apiKey })).status).toBe(201);
      await vi.waitFor(() => expect(receiver.received).toHaveLength(1), { timeout: 8_000 });
      expect(held).toHaveLength(4);
      answerAll();
      await vi.waitFor(() => expect(held).toHaveLength(2), { timeout: 8_000 });
      answerAll();
      await app.deps.webhooks.tick();
      const deliveries = await call(app, 'GET', `/api/v1/webhooks/${slowEndpoint.id}/deliveries`, { token: ws.apiKey });
      expect(deliveries.body.data.map((d: { status: string }) => d.status)).toEqual(Array(6).fill('succeeded'));
    } finally {
      await closeSlow();
      app.clock.set(new Date());
      await call(app, 'DELETE', `/api/v1/webhooks/${slowEndpoint.id}`, { token: ws.apiKey });
      await call(app, 'DELETE', `/api/v1/webhooks/${fastEndpoint.id}`, { token: ws.apiKey });
    }
  });

  it('validates endpoints: bad URLs, unknown event types, roles, other workspaces', async () => {
    for (const body of [
      { url: 'not a url' },
      { url: 'ftp://example.com/x' },
      { url: receiver.url, event_types: ['nope.nothing'] },
      { url: receiver.url, secret: 'x' },
    ]) {
      const res = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const created = await endpoint();
    const patched = await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, {
      token: ws.apiKey,
      body: { enabled: false, event_types: ['user.deleted'] },
    });
    expect(patched.body.data).toMatchObject({ enabled: false, event_types: ['user.deleted'] });
    const other = await createWorkspace(app, 'Other hooks');
    expect((await call(app, 'PATCH', `/api/v1/webhooks/${created.id}`, { token: other.apiKey, body: { enabled: true } })).status).toBe(404);
    expect((await call(app, 'GET', `/api/v1/webhooks/${created.id}/deliveries`, { token: other.apiKey })).status).toBe(404);
  });

  it('takes `events` for event_types (Logto’s and WorkOS’s name), on create and update; both at once is 400', async () => {
    const created = await call(app, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url: receiver.url, events: ['user.created'] },
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ event_types: ['user.created'] });
    expect(created.body.data).not.toHaveProperty('events');
    const patched = await call(app, 'PATCH', `/api/v1/webhooks/${created.body.data.id}`, {
      token: ws.apiKey,
      body: { events: ['user.deleted', 'user.updated'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ event_types: ['user.deleted', 'user.updated'] });
    // The alias is held to the canonical field's rules.
    const unknown = await call(app, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url: receiver.url, events: ['nope.nothing'] },
    });
    expect(unknown.status).toBe(400);
    for (const [method, path] of [
      ['POST', '/api/v1/webhooks/'],
      ['PATCH', `/api/v1/webhooks/${created.body.data.id}`],
    ] as const) {
      const both = await call(app, method, path, {
        token: ws.apiKey,
        body: { url: receiver.url, events: ['user.created'], event_types: ['user.created'] },
      });
      expect([both.status, both.body.error?.code], method).toEqual([400, 'BAD_REQUEST']);
      expect(both.body.error.details).toEqual([{ path: 'events', message: 'send event_types or events, not both' }]);
    }
    const kept = await call(app, 'GET', `/api/v1/webhooks/${created.body.data.id}`, { token: ws.apiKey });
    expect(kept.body.data.event_types).toEqual(['user.deleted', 'user.updated']);
    await call(app, 'DELETE', `/api/v1/webhooks/${created.body.data.id}`, { token: ws.apiKey });
  });

  it('reads one endpoint by id as it is listed, never its secret; unknown, malformed and other workspaces’ ids are 404', async () => {
    const created = await endpoint({ event_types: ['user.deleted'], description: 'Audit mirror' });
    const res = await call(app, 'GET', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
    expect(res.status).toBe(200);
    const listed = (await call(app, 'GET', '/api/v1/webhooks/?per_page=100', { token: ws.apiKey })).body.data;
    expect(res.body.data).toEqual(listed.find((e: { id: string }) => e.id === created.id));
    expect(res.body.data).toMatchObject({ id: created.id, url: receiver.url, description: 'Audit mirror', event_types: ['user.deleted'] });
    expect(JSON.stringify(res.body)).not.toContain(created.secret);
    expect(res.body.data).not.toHaveProperty('secret');
    // The literal path is still the event types, not an endpoint named "event-types".
    expect((await call(app, 'GET', '/api/v1/webhooks/event-types', { token: ws.apiKey })).body.meta.total).toBeGreaterThan(0);
    const other = await createWorkspace(app, 'Prying hooks');
    for (const [id, token] of [
      ['whk_00000000000000000000000000', ws.apiKey],
      ['not-an-id', ws.apiKey],
      [created.id, other.apiKey],
    ] as const) {
      const missing = await call(app, 'GET', `/api/v1/webhooks/${id}`, { token });
      expect([missing.status, missing.body.error?.code], id).toEqual([404, 'NOT_FOUND']);
    }
    await call(app, 'DELETE', `/api/v1/webhooks/${created.id}`, { token: ws.apiKey });
  });
});

describe('webhook targets with ALLOW_PRIVATE_WEBHOOK_TARGETS off', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  beforeAll(async () => {
    app = await startTestApp();
    ws = await createWorkspace(app, 'SSRF');
  });
  afterAll(() => app.close());

  it('refuses loopback, metadata, private and names resolving to them, when saved and when sent', async () => {
    const local = hostname();
    // This machine's own name resolves to a loopback address (/etc/hosts): a name that is not an IP.
    expect((await lookup(local, { all: true })).every((a) => a.address.startsWith('127.') || a.address === '::1')).toBe(true);
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.1/hook',
      'http://[::1]/x',
      'http://localhost:3000/x',
      `http://${local}:8080/x`,
    ]) {
      const res = await call(app, 'POST', '/api/v1/webhooks/', { token: ws.apiKey, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.error.details[0].path).toBe('url');
    }
    // At send time the name is resolved again and the connection goes only to a vetted address.
    const sent = await postWebhook(`http://${local}:9/x`, {}, '{}', { allowPrivate: false, httpsOnly: false });
    expect(sent).toMatchObject({ status: null, error: expect.stringContaining('loopback') });
  });
});

describe('webhook deliveries survive a restart', () => {
  it('resumes a retry schedule after the app is stopped mid-way, with the same webhook-id', async () => {
    const receiver = await startReceiver();
    receiver.state.status = 500;
    const first = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    const ws = await createWorkspace(first, 'Restart');
    const created = await call(first, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url: receiver.url, event_types: ['user.created'] },
    });
    await call(first, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('restart'), password: 'restart passphrase' },
    });
    await first.deps.webhooks.tick();
    expect(receiver.received).toHaveLength(1);
    await first.close();

    receiver.state.status = 200;
    const second = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    try {
      second.clock.advance(10_000);
      await second.deps.webhooks.tick();
      expect(receiver.received).toHaveLength(2);
      expect(receiver.received[1]?.headers['webhook-id']).toBe(receiver.received[0]?.headers['webhook-id']);
      expect(verify(created.body.data.secret, receiver.received[1] as Received).type).toBe('user.created');
    } finally {
      await second.close();
      await receiver.close();
    }
  });
});

describe('webhook dispatcher shutdown', () => {
  let app: TestApp;
  let ws: TestWorkspace;

  beforeAll(async () => {
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app, 'Shutdown');
  });
  afterAll(() => app.close());

  it('stop() waits for the send in flight and records its outcome before it resolves', async () => {
    const { url: slowUrl, held, answerAll, close: closeSlow } = await startHoldingReceiver();
    try {
      const created = await call(app, 'POST', '/api/v1/webhooks/', {
        token: ws.apiKey,
        body: { url: slowUrl },
      });
      // Far ahead, so that only this app's dispatcher finds the delivery due (see above).
      app.clock.advance(400 * 24 * 60 * 60 * 1000);
      expect((await call(app, 'POST', `/api/v1/webhooks/${created.body.data.id}/test`, { token: ws.apiKey })).status).toBe(201);
      await vi.waitFor(() => expect(held).toHaveLength(1), { timeout: 8_000 });

      const order: string[] = [];
      // As the dispatcher's timer may at any moment: a round running when stop() is called.
      app.deps.webhooks.kick();
      const stopping = app.deps.webhooks.stop().then(() => order.push('stopped'));
      // Once the stopped poller has no round running, the held send is all stop() can still wait for:
      // a stop() that did not wait for it would have resolved by the next turn of the event loop.
      await app.deps.webhooks.idle();
      await new Promise((resolve) => setImmediate(resolve));
      expect(app.deps.webhooks.sendingTo(created.body.data.id)).toBe(1);
      order.push('answered');
      answerAll();
      await stopping;
      expect(order).toEqual(['answered', 'stopped']);
      const deliveries = await call(app, 'GET', `/api/v1/webhooks/${created.body.data.id}/deliveries`, { token: ws.apiKey });
      expect(deliveries.body.data).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1, response_status: 200 })]);
    } finally {
      await closeSlow();
      app.clock.set(new Date());
    }
  });
});
