import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumAvailable, launchChromium, type Chromium } from '../helpers/chromium.ts';
import { call } from '../helpers/http.ts';
import { linkTokenIn, MailSink } from '../helpers/mail-sink.ts';
import { uniqueEmail, type TestWorkspace } from '../helpers/workspace.ts';
import { TotpDevice } from './totp-device.ts';

/** Short, readable addresses: the screenshots in the README come from these tests. */
const RUN = randomBytes(3).toString('hex');
const emailOf = (name: string) => `${name}.${RUN}@acme.example`;

async function createWorkspace(app: TestApp): Promise<TestWorkspace> {
  const owner = { email: emailOf('olivia'), password: 'correct horse battery' };
  const res = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name: 'Acme Corp', owner } });
  expect(res.status).toBe(201);
  return { id: res.body.data.workspace.id, apiKey: res.body.data.api_key, owner: { ...owner, id: res.body.data.owner.id } };
}

/**
 * The dashboard and hosted pages in a real browser (Debian's Chromium driven by playwright-core),
 * against the whole service with a real SMTP sink: what a person does, by the labels they read.
 * The tests run in order and share one workspace; each person signs in in their own tab (the
 * dashboard keeps its session per tab).
 */
describe.runIf(chromiumAvailable() || process.env.CI)('the web app in Chromium', () => {
  const mail = new MailSink();
  let app: TestApp;
  let ws: TestWorkspace;
  let chromium: Chromium;
  let owner: Page;
  let device: TotpDevice;
  const invitee = { email: emailOf('grace'), password: 'invited to the party', name: 'Grace Hopper' };

  beforeAll(async () => {
    await ensureWebBuild();
    // The webhook test sends to a receiver on this machine.
    app = await startTestApp({ SMTP_URL: await mail.start(), ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    ws = await createWorkspace(app);
    chromium = await launchChromium();
    owner = await chromium.newPage();
  });
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
    await mail.stop();
  });

  async function signInWithPassword(page: Page, email: string, password: string) {
    await expect.poll(() => page.getByLabel('Workspace ID', { exact: true }).inputValue()).not.toBe('');
    await page.getByLabel('Email', { exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('signs the owner in, enrolls an authenticator app from the key on the page, signs out, and signs in again through the challenge', async () => {
    await owner.goto(`${app.url}/login?workspace=${ws.id}`);
    await expect.poll(() => owner.title()).toBe('Sign in · Identity');
    await chromium.screenshot(owner, 'sign-in');
    await signInWithPassword(owner, ws.owner.email, ws.owner.password);
    await owner.waitForURL('**/dashboard/users');
    await owner.getByRole('heading', { level: 1, name: 'Users', exact: true }).waitFor();

    await owner
      .getByRole('navigation', { name: 'Dashboard', exact: true })
      .getByRole('link', { name: 'Account & security', exact: true })
      .click();
    await owner.getByRole('heading', { level: 1, name: 'Account & security', exact: true }).waitFor();
    await owner.getByText('No authenticator app yet').waitFor();
    await owner.getByRole('button', { name: 'Add an authenticator app', exact: true }).click();
    const dialog = owner.getByRole('dialog', { name: 'Add an authenticator app', exact: true });
    await dialog.getByLabel('Name', { exact: true }).fill('Phone');
    await dialog.getByRole('button', { name: 'Continue', exact: true }).click();
    const key = dialog.getByLabel('Setup key', { exact: true });
    await key.waitFor();
    await dialog.getByRole('img', { name: /QR code/ }).waitFor();
    await chromium.screenshot(owner, 'enroll-authenticator');
    device = new TotpDevice(await key.inputValue(), app.clock);

    await dialog.getByLabel('Six-digit code from the app', { exact: true }).fill('000000');
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
    await dialog.getByRole('alert').waitFor();
    await dialog.getByLabel('Six-digit code from the app', { exact: true }).fill(device.nextCode());
    await dialog.getByRole('button', { name: 'Confirm', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Phone is confirmed' }).waitFor();
    await owner.getByRole('row', { name: /Phone.*Verified/ }).waitFor();
    await chromium.screenshot(owner, 'account-security');

    await owner.getByRole('button', { name: 'Sign out', exact: true }).click();
    await owner.waitForURL('**/login?signed_out=1');
    await owner.getByText('You are signed out.').waitFor();

    await signInWithPassword(owner, ws.owner.email, ws.owner.password);
    await owner.getByRole('heading', { level: 1, name: 'Two-step verification', exact: true }).waitFor();
    await chromium.screenshot(owner, 'sign-in-challenge');
    await owner.getByLabel('Authentication code', { exact: true }).fill('123456');
    await owner.getByRole('button', { name: 'Verify', exact: true }).click();
    await owner.getByRole('alert').waitFor();
    await owner.getByLabel('Authentication code', { exact: true }).fill(device.nextCode());
    await owner.getByRole('button', { name: 'Verify', exact: true }).click();
    await owner.waitForURL('**/dashboard/users');
  });

  it('invites a user from the Users screen; the invitee accepts through the emailed link and is signed in', async () => {
    await owner.getByRole('button', { name: 'Invite user', exact: true }).click();
    const dialog = owner.getByRole('dialog', { name: 'Invite a user', exact: true });
    await dialog.getByLabel('Email', { exact: true }).fill(invitee.email);
    await dialog.getByRole('button', { name: 'Send invitation', exact: true }).click();
    await dialog.getByText(`Invitation sent to ${invitee.email}`).waitFor();
    await dialog.getByRole('button', { name: 'Done', exact: true }).click();

    const { link } = linkTokenIn(await mail.waitFor(invitee.email), 'accept-invitation');
    expect(link.startsWith(`${app.url}/accept-invitation?token=`)).toBe(true);
    const tab = await chromium.newPage();
    await tab.goto(link);
    await tab.getByRole('heading', { level: 1, name: 'Accept your invitation', exact: true }).waitFor();
    expect(tab.url()).toBe(`${app.url}/accept-invitation`);
    await tab.getByLabel('Your name', { exact: true }).fill(invitee.name);
    await tab.getByLabel('Password', { exact: true }).fill(invitee.password);
    await tab.getByLabel('Repeat the password', { exact: true }).fill('not the same password');
    await tab.getByRole('button', { name: 'Create my account', exact: true }).click();
    await tab.getByRole('alert').filter({ hasText: 'not the same' }).waitFor();
    await chromium.screenshot(tab, 'accept-invitation');
    await tab.getByLabel('Repeat the password', { exact: true }).fill(invitee.password);
    await tab.getByRole('button', { name: 'Create my account', exact: true }).click();
    await tab.waitForURL('**/dashboard/account?welcome=1');
    await tab.getByText('Welcome! Your account is ready.').waitFor();
    // A member manages only their own account: no management screens in the navigation.
    const nav = tab.getByRole('navigation', { name: 'Dashboard', exact: true });
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Account & security']);
    await tab.close();

    await owner.reload();
    await owner.getByLabel('Search', { exact: true }).fill('grace');
    await owner.getByRole('button', { name: 'Search', exact: true }).click();
    await owner.waitForURL('**/dashboard/users?q=grace');
    await owner.getByRole('row', { name: new RegExp(invitee.email) }).waitFor();
  });

  it('shows the Users screen with its search, filters, pagination and per-user roles and groups', async () => {
    for (const label of ['Ada Lovelace', 'Alan Turing', 'Katherine Johnson']) {
      const email = emailOf(label.split(' ')[0]?.toLowerCase() ?? 'someone');
      await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email, name: label, password: 'a long passphrase' } });
    }
    await owner.goto(`${app.url}/dashboard/users`);
    await owner.getByRole('row', { name: /Ada Lovelace/ }).waitFor();
    await owner.getByRole('button', { name: /Roles and groups of ada\./ }).click();
    const access = owner.getByRole('dialog', { name: /Roles and groups of ada\./ });
    await access.getByLabel('Role', { exact: true }).selectOption({ label: 'viewer' });
    await access.getByRole('button', { name: 'Give role', exact: true }).click();
    const held = access.getByRole('list', { name: /Roles of ada\./ });
    await held.getByText('viewer', { exact: true }).waitFor();
    // A confirmation opened from this dialog closes alone, whether cancelled or confirmed.
    await access.getByRole('button', { name: 'Revoke member', exact: true }).click();
    const revoke = owner.getByRole('dialog', { name: /Revoke member from ada\./ });
    await revoke.getByRole('button', { name: 'Cancel', exact: true }).click();
    await revoke.waitFor({ state: 'hidden' });
    expect(await access.isVisible()).toBe(true);
    await access.getByRole('button', { name: 'Revoke member', exact: true }).click();
    await revoke.getByRole('button', { name: 'Revoke', exact: true }).click();
    await held.getByText('member', { exact: true }).waitFor({ state: 'detached' });
    expect(await access.isVisible()).toBe(true);
    await access.getByRole('button', { name: 'Close', exact: true }).click();
    await owner.getByRole('row', { name: /Ada Lovelace.*viewer/ }).waitFor();

    await owner.getByRole('button', { name: /Deactivate alan\./ }).click();
    const confirm = owner.getByRole('dialog', { name: /Deactivate alan\./ });
    await confirm.getByText('signed out everywhere').waitFor();
    await confirm.getByRole('button', { name: 'Deactivate', exact: true }).click();
    await owner.getByRole('row', { name: /Alan Turing.*deactivated/ }).waitFor();
    await owner.getByLabel('Status', { exact: true }).selectOption('deactivated');
    await owner.waitForURL('**/dashboard/users?status=deactivated');
    await expect.poll(() => owner.getByRole('row', { name: /@/ }).count()).toBe(1);
    await owner.getByLabel('Status', { exact: true }).selectOption('');
    await owner.getByRole('row', { name: /Katherine Johnson/ }).waitFor();
    await chromium.screenshot(owner, 'users');

    // Past 20 users the list pages.
    for (let i = 0; i < 18; i++) {
      await call(app, 'POST', '/api/v1/users', { token: ws.apiKey, body: { email: uniqueEmail('bulk'), password: 'a long passphrase' } });
    }
    await owner.reload();
    const pages = owner.getByRole('navigation', { name: 'Pages of users', exact: true });
    await pages.getByText('1–20 of 23 users').waitFor();
    await pages.getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL('**/dashboard/users?page=2');
    await pages.getByText('21–23 of 23 users · page 2 of 2').waitFor();
    await expect.poll(() => owner.getByRole('row', { name: /@/ }).count()).toBe(3);
    // A page past the last (an old link, its last row deleted) shows the last page, not "No users yet".
    await owner.goto(`${app.url}/dashboard/users?page=5`);
    await owner.waitForURL('**/dashboard/users?page=2');
    await pages.getByText('21–23 of 23 users · page 2 of 2').waitFor();
    expect(await owner.getByText('No users yet').count()).toBe(0);

    // A viewer sees the same list, read-only.
    const viewer = await chromium.newPage();
    await viewer.goto(`${app.url}/login`);
    await signInWithPassword(viewer, emailOf('ada'), 'a long passphrase');
    await viewer.waitForURL('**/dashboard/users');
    await viewer.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
    expect(await viewer.getByRole('button', { name: 'Invite user', exact: true }).count()).toBe(0);
    expect(await viewer.getByRole('button', { name: /Deactivate/ }).count()).toBe(0);
    await viewer.close();
  });

  it('resets a forgotten password through the emailed link', async () => {
    const tab = await chromium.newPage();
    await tab.goto(`${app.url}/login`);
    await tab.getByRole('link', { name: 'Forgot your password?', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Reset your password', exact: true }).waitFor();
    await tab.getByLabel('Email', { exact: true }).fill(invitee.email);
    await tab.getByRole('button', { name: 'Email me a reset link', exact: true }).click();
    await tab.getByRole('status').filter({ hasText: /email/i }).waitFor();

    const { link } = linkTokenIn(await mail.waitFor(invitee.email, 1), 'reset-password');
    await tab.goto(link);
    await tab.getByRole('heading', { level: 1, name: 'Choose a new password', exact: true }).waitFor();
    expect(tab.url()).toBe(`${app.url}/reset-password`);
    invitee.password = 'a brand new passphrase';
    await tab.getByLabel('New password', { exact: true }).fill(invitee.password);
    await tab.getByLabel('Repeat the password', { exact: true }).fill(invitee.password);
    await chromium.screenshot(tab, 'reset-password');
    await tab.getByRole('button', { name: 'Set the new password', exact: true }).click();
    await tab.getByText('Your password has been changed.').waitFor();
    await tab.getByRole('link', { name: 'Sign in with the new password', exact: true }).click();
    await signInWithPassword(tab, invitee.email, invitee.password);
    await tab.waitForURL('**/dashboard/account');
    await tab.close();

    const again = await chromium.newPage();
    await again.goto(link);
    await again.getByLabel('New password', { exact: true }).fill('yet another passphrase');
    await again.getByLabel('Repeat the password', { exact: true }).fill('yet another passphrase');
    await again.getByRole('button', { name: 'Set the new password', exact: true }).click();
    await again.getByRole('alert').waitFor();
    await again.close();
  });

  it('administers roles, groups, organizations (portal link) and applications (secret rotation)', async () => {
    const nav = owner.getByRole('navigation', { name: 'Dashboard', exact: true });
    await nav.getByRole('link', { name: 'Roles', exact: true }).click();
    await owner.getByRole('button', { name: 'Create role', exact: true }).click();
    const role = owner.getByRole('dialog', { name: 'Create a custom role', exact: true });
    await role.getByLabel('Name', { exact: true }).fill('Support agent');
    await role.getByLabel('Users: read', { exact: true }).check();
    await role.getByLabel('Groups: read', { exact: true }).check();
    await role.getByRole('button', { name: 'Create role', exact: true }).click();
    await owner.getByRole('row', { name: /Support agent.*users:read, groups:read/ }).waitFor();
    await chromium.screenshot(owner, 'roles');

    await nav.getByRole('link', { name: 'Groups', exact: true }).click();
    await owner.getByText('No groups yet').waitFor();
    await owner.getByRole('button', { name: 'Create group', exact: true }).click();
    const group = owner.getByRole('dialog', { name: 'Create a group', exact: true });
    await group.getByLabel('Name', { exact: true }).fill('Engineering');
    await group.getByRole('button', { name: 'Create group', exact: true }).click();
    await owner.getByRole('row', { name: /Engineering/ }).waitFor();

    await nav.getByRole('link', { name: 'Organizations', exact: true }).click();
    await owner.getByRole('button', { name: 'Create organization', exact: true }).click();
    const org = owner.getByRole('dialog', { name: 'Create an organization', exact: true });
    await org.getByLabel('Name', { exact: true }).fill('Globex');
    await org.getByLabel('Email domains', { exact: true }).fill('globex.example, globex.test');
    await org.getByRole('button', { name: 'Create organization', exact: true }).click();
    await owner.getByRole('row', { name: /Globex.*globex\.example/ }).waitFor();
    // Edits closed without saving are gone when the dialog opens again.
    await owner.getByRole('button', { name: 'Edit Globex', exact: true }).click();
    const edit = owner.getByRole('dialog', { name: 'Edit Globex', exact: true });
    await edit.getByLabel('Name', { exact: true }).fill('Globex (not saved)');
    await edit.getByRole('button', { name: 'Close', exact: true }).click();
    await owner.getByRole('button', { name: 'Edit Globex', exact: true }).click();
    expect(await edit.getByLabel('Name', { exact: true }).inputValue()).toBe('Globex');
    await edit.getByRole('button', { name: 'Close', exact: true }).click();
    await owner.getByRole('button', { name: 'Admin Portal link for Globex', exact: true }).click();
    const portal = owner.getByRole('dialog', { name: 'Admin Portal link for Globex', exact: true });
    const portalLink = await portal.getByRole('code').textContent();
    expect(portalLink).toMatch(new RegExp(`^${app.url}/portal\\?token=`));
    await chromium.screenshot(owner, 'organizations');
    await portal.getByRole('button', { name: 'Close', exact: true }).click();

    await nav.getByRole('link', { name: 'Applications', exact: true }).click();
    await owner.getByRole('button', { name: 'Register application', exact: true }).click();
    const register = owner.getByRole('dialog', { name: 'Register an application', exact: true });
    await register.getByLabel('Name', { exact: true }).fill('Acme Portal');
    await register.getByLabel('Redirect URIs', { exact: true }).fill('https://portal.acme.example/callback');
    await register.getByRole('button', { name: 'Register', exact: true }).click();
    const first = await register.getByRole('code').last().textContent();
    await register.getByRole('button', { name: 'Done', exact: true }).click();
    await owner.getByRole('button', { name: 'Rotate the secret of Acme Portal', exact: true }).click();
    const rotate = owner.getByRole('dialog', { name: 'Rotate the secret of Acme Portal?', exact: true });
    await rotate.getByText('stops working at once').waitFor();
    await rotate.getByRole('button', { name: 'Rotate secret', exact: true }).click();
    const second = await rotate.getByRole('code').textContent();
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    await rotate.getByRole('button', { name: 'Done', exact: true }).click();
    await owner.getByRole('row', { name: /Acme Portal.*rotated/ }).waitFor();
    await chromium.screenshot(owner, 'applications');
  });

  it('runs an OAuth code flow through the hosted sign-in, second factor included; the next authorization needs no sign-in', async () => {
    // The relying party's callback: the browser's request is answered here, where the code is read.
    const relyingParty: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in'));
    await new Promise<void>((resolve) => relyingParty.listen(0, '127.0.0.1', resolve));
    const redirectUri = `http://127.0.0.1:${(relyingParty.address() as AddressInfo).port}/callback`;
    const created = await call(app, 'POST', '/api/v1/applications', {
      token: ws.apiKey,
      body: { name: 'Acme Notes', type: 'spa', redirect_uris: [redirectUri] },
    });
    const config = await oidc.discovery(new URL(app.url), created.body.data.id, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const tab = await chromium.newPage();
    await tab.goto(url.href);
    await tab.getByRole('heading', { level: 1, name: 'Sign in to Acme Notes', exact: true }).waitFor();
    expect(new URL(tab.url()).pathname).toMatch(/^\/oauth\/interaction\//);
    await chromium.screenshot(tab, 'oauth-sign-in');
    await tab.getByLabel('Email', { exact: true }).fill(ws.owner.email);
    await tab.getByLabel('Password', { exact: true }).fill(ws.owner.password);
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    await tab.getByLabel('Authentication code', { exact: true }).fill(device.nextCode());
    await tab.getByRole('button', { name: 'Verify', exact: true }).click();
    await tab.waitForURL(`${redirectUri}?**`);

    const tokens = await oidc.authorizationCodeGrant(config, new URL(tab.url()), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()?.sub).toBe(ws.owner.id);
    expect(tokens.claims()?.amr).toEqual(expect.arrayContaining(['pwd', 'otp']));

    // The sign-in is remembered over plain http too: the next authorization goes straight back with a
    // code, without the sign-in page (its session cookie is SameSite=Lax here, which Chromium keeps).
    const again = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    await tab.goto(again.href);
    await tab.waitForURL(`${redirectUri}?**`);
    expect(new URL(tab.url()).searchParams.get('code')).toBeTruthy();
    await tab.close();
    await new Promise((resolve) => relyingParty.close(resolve));
  });

  it('adds a webhook endpoint (its secret shown once), sends a test event and sees the delivery, redelivers it', async () => {
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      received.push(String(req.headers['webhook-id']));
      req.resume();
      res.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    try {
      const nav = owner.getByRole('navigation', { name: 'Dashboard', exact: true });
      await nav.getByRole('link', { name: 'Webhooks', exact: true }).click();
      await owner.getByText('No endpoints yet').waitFor();
      await owner.getByRole('button', { name: 'Add endpoint', exact: true }).click();
      const dialog = owner.getByRole('dialog', { name: 'Add a webhook endpoint', exact: true });
      await dialog.getByLabel('URL', { exact: true }).fill(url);
      await dialog.getByLabel('Description', { exact: true }).fill('Acme event bus');
      await dialog.getByLabel('webhook.test', { exact: true }).check();
      await dialog.getByLabel('user.created', { exact: true }).check();
      await dialog.getByRole('button', { name: 'Add endpoint', exact: true }).click();
      const secret = dialog.getByText(/^whsec_/);
      await secret.waitFor();
      await dialog.getByText("You won't see it again").waitFor();
      await dialog.getByRole('button', { name: 'Copy', exact: true }).waitFor();
      await chromium.screenshot(owner, 'webhook-secret');
      await dialog.getByRole('button', { name: 'Done', exact: true }).click();
      await owner.getByRole('row', { name: /Acme event bus.*webhook\.test, user\.created.*enabled/ }).waitFor();
      expect(await owner.getByText(/whsec_/).count()).toBe(0);

      await owner.getByRole('button', { name: `Send a test event to ${url}`, exact: true }).click();
      await owner.getByRole('status').filter({ hasText: 'Test event queued' }).waitFor();
      await owner.getByRole('link', { name: `Deliveries of ${url}`, exact: true }).click();
      await owner.getByRole('heading', { level: 1, name: 'Deliveries', exact: true }).waitFor();
      await owner.getByRole('row', { name: /webhook\.test.*succeeded.*204/ }).waitFor();
      expect(received).toHaveLength(1);
      await owner.getByText('1 recent attempt').click();
      await owner.getByText(/204 in \d+ ms/).waitFor();
      await chromium.screenshot(owner, 'webhook-deliveries');

      await owner.getByRole('button', { name: /^Redeliver webhook\.test/ }).click();
      await expect.poll(() => received.length).toBe(2);
      expect(received[1]).toBe(received[0]);
      await owner.getByText('2 recent attempts').waitFor();
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('creates an action from the template, shows a syntax error with its line, deploys it and tests it', async () => {
    const nav = owner.getByRole('navigation', { name: 'Dashboard', exact: true });
    await nav.getByRole('link', { name: 'Actions', exact: true }).click();
    await owner.getByText('No actions yet').waitFor();
    await owner.getByRole('button', { name: 'Create action', exact: true }).click();
    const dialog = owner.getByRole('dialog', { name: 'Create an action', exact: true });
    await dialog
      .getByLabel('Start from', { exact: true })
      .selectOption({ label: 'Template: Require a second factor for admins and owners' });
    await dialog.getByRole('button', { name: 'Create action', exact: true }).click();
    await owner.getByRole('heading', { level: 1, name: 'Require a second factor for admins and owners', exact: true }).waitFor();
    await owner.getByText('Never deployed').waitFor();

    const code = owner.getByRole('textbox', { name: 'Code', exact: true });
    const template = await code.inputValue();
    expect(template).toContain('api.requireSecondFactor()');
    await code.fill(template.replace('api.requireSecondFactor();', 'api.requireSecondFactor(;'));
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved as a draft' }).waitFor();
    await owner.getByRole('button', { name: 'Deploy', exact: true }).click();
    await owner
      .getByRole('alert')
      .filter({ hasText: /line \d+/ })
      .waitFor();

    await code.fill(template);
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved as a draft' }).waitFor();
    await owner.getByRole('button', { name: 'Deploy', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Version 1 is deployed' }).waitFor();

    await owner.getByRole('button', { name: 'Run test', exact: true }).click();
    const result = owner.getByRole('region', { name: 'Test result', exact: true });
    await result.getByText('allow', { exact: true }).waitFor();
    await result.getByText('Yes', { exact: true }).waitFor();
    await chromium.screenshot(owner, 'action-editor');
  });

  it('lists the audit events these produced, filters them by event type and opens one; a viewer reads webhooks and actions', async () => {
    const nav = owner.getByRole('navigation', { name: 'Dashboard', exact: true });
    await nav.getByRole('link', { name: 'Audit log', exact: true }).click();
    await owner
      .getByRole('row', { name: /action\.deploy/ })
      .first()
      .waitFor();
    await owner
      .getByRole('row', { name: /webhook\.create/ })
      .first()
      .waitFor();
    await chromium.screenshot(owner, 'audit-log');
    await owner.getByLabel('Event type', { exact: true }).fill('webhook.test');
    await owner.getByRole('button', { name: 'Filter', exact: true }).click();
    await owner.waitForURL('**/dashboard/audit?event_type=webhook.test');
    await expect.poll(() => owner.getByRole('row', { name: /Details of/ }).count()).toBe(1);
    await owner.getByRole('row', { name: /webhook\.test.*success/ }).waitFor();
    await owner.getByRole('button', { name: /^Details of webhook\.test/ }).click();
    const details = owner.getByRole('dialog', { name: 'Event webhook.test', exact: true });
    await details.getByText('delivery_id').waitFor();
    await details.getByRole('button', { name: 'Close', exact: true }).click();

    const viewer = await chromium.newPage();
    await viewer.goto(`${app.url}/login`);
    await signInWithPassword(viewer, emailOf('ada'), 'a long passphrase');
    await viewer.waitForURL('**/dashboard/users');
    const viewerNav = viewer.getByRole('navigation', { name: 'Dashboard', exact: true });
    await viewerNav.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await viewer.getByRole('row', { name: /Acme event bus/ }).waitFor();
    await viewer.getByRole('note').filter({ hasText: 'webhooks:write' }).waitFor();
    expect(await viewer.getByRole('button', { name: /Add endpoint|Send a test event|Delete/ }).count()).toBe(0);
    await viewerNav.getByRole('link', { name: 'Actions', exact: true }).click();
    await viewer.getByRole('link', { name: 'Require a second factor for admins and owners', exact: true }).click();
    await viewer.getByRole('note').filter({ hasText: 'actions:write' }).waitFor();
    await viewer.getByText('api.requireSecondFactor();').waitFor();
    expect(await viewer.getByRole('button', { name: /Deploy|Run test|Save/ }).count()).toBe(0);
    await viewer.close();
  });

  it('fits a 375-pixel phone screen: nothing but wide tables scrolls sideways, and Sign out is on the screen', async () => {
    const phone = await chromium.newPage();
    await phone.setViewportSize({ width: 375, height: 740 });
    await phone.goto(`${app.url}/login`);
    await signInWithPassword(phone, emailOf('ada'), 'a long passphrase');
    await phone.waitForURL('**/dashboard/users');
    for (const path of ['users', 'account', 'organizations', 'audit']) {
      await phone.goto(`${app.url}/dashboard/${path}`);
      await phone.getByRole('table').first().waitFor();
      const width = await phone.evaluate(() => document.documentElement.scrollWidth);
      expect({ path, width }).toEqual({ path, width: 375 });
      const signOut = await phone.getByRole('button', { name: 'Sign out', exact: true }).boundingBox();
      expect(signOut && signOut.x + signOut.width).toBeLessThanOrEqual(375);
    }
    await phone.close();
  });

  it('ran every page without a script error or a Content-Security-Policy violation', () => {
    expect(chromium.problems).toEqual([]);
  });
});
