import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { someIp } from './helpers/auth.ts';
import { drainEarlierEvents, startWebhookReceiver, type Told, type WebhookReceiver } from './helpers/events.ts';
import { call } from './helpers/http.ts';
import { linkTokenIn, MailSink } from './helpers/mail-sink.ts';
import { startTestIdp, type TestIdp } from './helpers/test-idp.ts';
import { createWorkspace, uniqueEmail, type TestWorkspace } from './helpers/workspace.ts';

/**
 * CONTRACT "Events": a subscriber hears of every grant and every change to a user. A new account's first
 * role is part of its creation (`user.created` names it, as its `user.create` audit row does), and a
 * deleted account's roles go with it (`user.deleted`); `role.assigned`/`role.revoked` tell of grants to
 * and revokes from accounts that go on living. Observed as a subscriber observes them: deliveries to a
 * webhook endpoint.
 */
describe('every grant and every user change reaches the subscriber', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let idp: TestIdp;
  let receiver: WebhookReceiver;
  let told: Told[];
  const mail = new MailSink();

  beforeAll(async () => {
    app = await startTestApp({
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALLOW_PRIVATE_IDP_TARGETS: 'true',
      SMTP_URL: await mail.start(),
      BASE_URL: 'https://id.example.test',
    });
    await drainEarlierEvents(app);
    ws = await createWorkspace(app, 'Events');
    receiver = await startWebhookReceiver();
    told = receiver.told;
    const url = receiver.url;
    const endpoint = await call(app, 'POST', '/api/v1/webhooks/', {
      token: ws.apiKey,
      body: { url, event_types: ['user.created', 'user.deleted', 'role.assigned', 'role.revoked', 'user.updated'] },
    });
    expect(endpoint.status).toBe(201);
    idp = await startTestIdp([
      {
        client_id: 'events-app',
        client_secret: 'events-idp-secret',
        redirect_uris: [`${app.deps.config.BASE_URL}/api/v1/auth/sso/oidc/callback`],
      },
    ]);
  });
  afterAll(async () => {
    await idp.close();
    await receiver.close();
    await app.close();
    await mail.stop();
  });

  /** What the endpoint was told about `userId` once every pending delivery is sent. */
  async function toldAbout(type: string, userId: string): Promise<Record<string, unknown>[]> {
    await app.deps.webhooks.tick();
    await app.deps.webhooks.tick();
    return told.filter((t) => t.type === type && (t.data.user_id ?? t.data.id) === userId).map((t) => t.data);
  }

  async function auditOf(eventType: string, userId: string) {
    const res = await call(app, 'GET', `/api/v1/audit/events/?event_type=${eventType}&target_id=${userId}`, { token: ws.apiKey });
    return res.body.data as { details: Record<string, unknown> }[];
  }

  async function roleId(key: string): Promise<string> {
    const roles = await call(app, 'GET', '/api/v1/roles?per_page=100', { token: ws.apiKey });
    return roles.body.data.find((r: { key: string }) => r.key === key).id as string;
  }

  it('names the first role of a user an admin creates on its user.created and its user.create row, told once, not as role.assigned', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('made'), password: 'made by an admin' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    const member = await roleId('member');
    expect(await toldAbout('user.created', id)).toEqual([
      { id, email: created.body.data.email, name: null, role: 'member', role_id: member },
    ]);
    expect(await toldAbout('role.assigned', id)).toEqual([]);
    expect((await auditOf('user.create', id))[0]?.details).toMatchObject({ role: 'member', role_id: member });
  });

  it('names the role of an accepted invitation on the user.created it tells', async () => {
    const email = uniqueEmail('invited');
    const viewer = await roleId('viewer');
    expect((await call(app, 'POST', '/api/v1/invitations', { token: ws.apiKey, body: { email, role_id: 'viewer' } })).status).toBe(201);
    const { token } = linkTokenIn(await mail.waitFor(email), 'accept-invitation');
    const accepted = await call(app, 'POST', '/api/v1/invitations/accept', {
      body: { token, password: 'invited passphrase' },
      headers: { 'x-forwarded-for': someIp() },
    });
    expect(accepted.status).toBe(200);
    const id = accepted.body.data.user.id as string;
    expect(await toldAbout('user.created', id)).toEqual([{ id, email, name: null, via: 'invitation', role: 'viewer', role_id: viewer }]);
    expect(await toldAbout('role.assigned', id)).toEqual([]);
    expect((await auditOf('user.create', id))[0]?.details).toMatchObject({ via: 'invitation', role: 'viewer', role_id: viewer });
  });

  it('names the default role an SSO sign-in gives the account it creates on its user.created, and tells user.updated when a later sign-in changes it', async () => {
    const viewer = await roleId('viewer');
    const org = await call(app, 'POST', '/api/v1/organizations', {
      token: ws.apiKey,
      body: { name: 'Events Org', domains: ['events-sso.example'], sso: { default_role: 'viewer' } },
    });
    expect(org.status).toBe(201);
    const link = await call(app, 'POST', '/api/v1/organizations/portal-link', {
      token: ws.apiKey,
      body: { organization_id: org.body.data.id },
    });
    const portal = new URL(link.body.data.link as string);
    const opened = await call(app, 'GET', `${portal.pathname}${portal.search}`);
    const cookie = (opened.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const saved = await call(app, 'POST', '/portal/sso/oidc', {
      raw: new URLSearchParams({ issuer: idp.issuer, client_id: 'events-app', client_secret: 'events-idp-secret' }).toString(),
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(saved.status).toBe(200);

    const signIn = async (claims: Record<string, unknown>) => {
      const start = await call(app, 'GET', `/api/v1/auth/sso/start?workspace_id=${ws.id}&email=ann@events-sso.example`);
      idp.signInAs({ sub: 'ann', claims: { email: 'ann@events-sso.example', ...claims } });
      const back = new URL(await idp.authorize(new URL(start.headers.get('location') as string).href));
      const returned = await call(app, 'GET', `${back.pathname}${back.search}`);
      const code = new URL(returned.headers.get('location') as string).searchParams.get('code');
      const exchanged = await call(app, 'POST', '/api/v1/auth/oauth/exchange', { body: { code } });
      expect(exchanged.status).toBe(200);
      return exchanged.body.data.user.id as string;
    };
    const id = await signIn({ given_name: 'Ann' });
    expect(await toldAbout('user.created', id)).toEqual([
      { id, email: 'ann@events-sso.example', via: org.body.data.id, role: 'viewer', role_id: viewer },
    ]);
    expect((await auditOf('user.create', id))[0]?.details).toMatchObject({ role: 'viewer', role_id: viewer });
    expect(await toldAbout('user.updated', id)).toEqual([]);

    // The same profile again changes nothing; a new attribute is a change to the user.
    expect(await signIn({ given_name: 'Ann' })).toBe(id);
    expect(await toldAbout('user.updated', id)).toEqual([]);
    expect(await signIn({ given_name: 'Annabel' })).toBe(id);
    expect(await toldAbout('user.updated', id)).toEqual([{ id, email: 'ann@events-sso.example', changes: ['metadata'] }]);
    expect(await toldAbout('user.created', id)).toHaveLength(1);
  });

  it('tells a deleted user as user.deleted alone: its roles go with it, without a role.revoked each', async () => {
    const created = await call(app, 'POST', '/api/v1/users', {
      token: ws.apiKey,
      body: { email: uniqueEmail('gone'), password: 'deleted soon enough' },
    });
    const id = created.body.data.id as string;
    expect((await call(app, 'POST', '/api/v1/roles/assign', { token: ws.apiKey, body: { user_id: id, role_id: 'viewer' } })).status).toBe(
      201,
    );
    expect((await call(app, 'DELETE', `/api/v1/users/${id}`, { token: ws.apiKey })).status).toBe(200);
    expect(await toldAbout('user.deleted', id)).toEqual([{ id, email: created.body.data.email }]);
    expect(await toldAbout('role.revoked', id)).toEqual([]);
  });
});
