import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumAvailable, launchChromium, signedInPage, type Chromium } from '../helpers/chromium.ts';
import { signIn } from '../helpers/auth.ts';
import { call } from '../helpers/http.ts';
import { uniqueEmail } from '../helpers/workspace.ts';
import { TotpDevice } from './totp-device.ts';

/** The texts an input is described by (its hint, then what the API said about it), as a screen reader reads them. */
function descriptionOf(field: Locator): Promise<string> {
  return field.evaluate((input) =>
    (input.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  );
}

/**
 * What the dashboard tells an administrator after a change: a refused field named by the field, an
 * unconfirmed authenticator app that can still be finished, and role changes seen on every screen
 * without a reload. One service, one browser, the owner in one tab; the tests run in order.
 */
describe.runIf(chromiumAvailable() || process.env.CI)('the dashboard after a change', () => {
  let app: TestApp;
  let chromium: Chromium;
  let owner: Page;
  const ownerAccount = { email: uniqueEmail('olivia'), password: 'correct horse battery' };
  const ada = uniqueEmail('ada');
  let adaId: string;
  let apiKey: string;
  let workspaceId: string;

  beforeAll(async () => {
    await ensureWebBuild();
    app = await startTestApp();
    const res = await call(app, 'POST', '/platform/v1/workspaces', {
      token: PLATFORM_TOKEN,
      body: { name: 'Acme Corp', owner: ownerAccount },
    });
    expect(res.status).toBe(201);
    apiKey = res.body.data.api_key;
    workspaceId = res.body.data.workspace.id;
    const created = await call(app, 'POST', '/api/v1/users', { token: apiKey, body: { email: ada, password: 'a long passphrase' } });
    expect(created.status).toBe(201);
    adaId = created.body.data.id;
    chromium = await launchChromium();
    owner = await signedInPage(chromium, app.url, res.body.data.workspace.id, ownerAccount);
  });
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  const nav = () => owner.getByRole('navigation', { name: 'Dashboard', exact: true });

  it('shows each field problem of a refused form under its field, and a banner only for what no field shows', async () => {
    await owner.getByRole('button', { name: 'Create user', exact: true }).click();
    const dialog = owner.getByRole('dialog', { name: 'Create a user', exact: true });
    const email = dialog.getByLabel('Email', { exact: true });
    // The browser's own check lets `a@b` through; the API refuses it, naming `email`.
    await email.fill('a@b');
    await dialog.getByLabel('First password', { exact: true }).fill('a long passphrase');
    await dialog.getByRole('button', { name: 'Create user', exact: true }).click();
    await dialog.getByText('Must be an email address', { exact: true }).waitFor();
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(email)).toBe('Must be an email address');
    expect(await owner.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('email');
    expect(await dialog.getByRole('alert').count()).toBe(0);
    expect(await dialog.getByLabel('First password', { exact: true }).getAttribute('aria-invalid')).toBeNull();

    // A conflict names its field too (the address is taken): shown under it, in place of the last problem.
    await email.fill(ada);
    await dialog.getByRole('button', { name: 'Create user', exact: true }).click();
    await dialog.getByText('Belongs to another user', { exact: true }).waitFor();
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(email)).toBe('Belongs to another user');
    expect(await dialog.getByText('Must be an email address', { exact: true }).count()).toBe(0);
    expect(await dialog.getByRole('alert').count()).toBe(0);
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();

    // A taken group name, under the group's Name field.
    const taken = await call(app, 'POST', '/api/v1/groups', { token: apiKey, body: { name: 'Taken' } });
    expect(taken.status).toBe(201);
    await nav().getByRole('link', { name: 'Groups', exact: true }).click();
    await owner.getByRole('button', { name: 'Create group', exact: true }).click();
    const group = owner.getByRole('dialog', { name: 'Create a group', exact: true });
    const groupName = group.getByLabel('Name', { exact: true });
    await groupName.fill('taken');
    await group.getByRole('button', { name: 'Create group', exact: true }).click();
    await group.getByText('Is already taken', { exact: true }).waitFor();
    expect(await groupName.getAttribute('aria-invalid')).toBe('true');
    expect(await group.getByRole('alert').count()).toBe(0);
    await group.getByRole('button', { name: 'Close', exact: true }).click();
    expect((await call(app, 'DELETE', `/api/v1/groups/${taken.body.data.id}`, { token: apiKey })).status).toBe(200);

    // A nested field (`sso.default_role`) in another form.
    await nav().getByRole('link', { name: 'Organizations', exact: true }).click();
    await owner.getByRole('button', { name: 'Create organization', exact: true }).click();
    const org = owner.getByRole('dialog', { name: 'Create an organization', exact: true });
    await org.getByLabel('Name', { exact: true }).fill('Initech');
    const role = org.getByLabel('Role of new accounts', { exact: true });
    await role.fill('no-such-role');
    await org.getByRole('button', { name: 'Create organization', exact: true }).click();
    await org.getByText('Must be a role key', { exact: true }).waitFor();
    expect(await role.getAttribute('aria-invalid')).toBe('true');
    expect(await descriptionOf(role)).toContain('Must be a role key');
    expect(await org.getByRole('alert').count()).toBe(0);
    await org.getByRole('button', { name: 'Close', exact: true }).click();

    // Entries of a list are told apart by their place in it.
    await nav().getByRole('link', { name: 'Applications', exact: true }).click();
    await owner.getByRole('button', { name: 'Register application', exact: true }).click();
    const register = owner.getByRole('dialog', { name: 'Register an application', exact: true });
    await register.getByLabel('Name', { exact: true }).fill('Intranet');
    const uris = register.getByLabel('Redirect URIs', { exact: true });
    await uris.fill('https://intranet.example/callback\nhttp://intranet.example/a\nftp://intranet.example/b');
    await register.getByRole('button', { name: 'Register', exact: true }).click();
    await register.getByText(/^Entry 2: /).waitFor();
    expect(await descriptionOf(uris)).toMatch(/Entry 2: .*Entry 3: /);
    expect(await descriptionOf(uris)).not.toContain('Entry 1');
    expect(await register.getByRole('alert').count()).toBe(0);
    await register.getByRole('button', { name: 'Close', exact: true }).click();
  });

  it('shows a role given or taken on a user at once, on the Users and Roles screens, without a reload', async () => {
    const adminMembers = () =>
      owner
        .getByRole('table', { name: 'Roles', exact: true })
        .getByRole('row', { name: /Manages everything in the workspace/ })
        .locator('td')
        .nth(2)
        .textContent();
    await nav().getByRole('link', { name: 'Roles', exact: true }).click();
    await expect.poll(adminMembers, { timeout: 5000 }).toBe('0');

    await nav().getByRole('link', { name: 'Users', exact: true }).click();
    await owner.getByRole('button', { name: `Roles and groups of ${ada}`, exact: true }).click();
    const access = owner.getByRole('dialog', { name: `Roles and groups of ${ada}`, exact: true });
    await access.getByLabel('Role', { exact: true }).selectOption({ label: 'admin' });
    await access.getByRole('button', { name: 'Give role', exact: true }).click();
    await access
      .getByRole('list', { name: `Roles of ${ada}` })
      .getByText('admin', { exact: true })
      .waitFor();
    await access.getByRole('button', { name: 'Close', exact: true }).click();
    await owner.getByRole('row', { name: new RegExp(`${ada}.*\\badmin\\b`) }).waitFor();

    await nav().getByRole('link', { name: 'Roles', exact: true }).click();
    await expect.poll(adminMembers, { timeout: 5000 }).toBe('1');

    await nav().getByRole('link', { name: 'Users', exact: true }).click();
    await owner.getByRole('button', { name: `Roles and groups of ${ada}`, exact: true }).click();
    await access.getByRole('button', { name: 'Revoke admin', exact: true }).click();
    await owner
      .getByRole('dialog', { name: `Revoke admin from ${ada}?` })
      .getByRole('button', { name: 'Revoke', exact: true })
      .click();
    await access
      .getByRole('list', { name: `Roles of ${ada}` })
      .getByText('admin', { exact: true })
      .waitFor({ state: 'detached' });
    await access.getByRole('button', { name: 'Close', exact: true }).click();
    await nav().getByRole('link', { name: 'Roles', exact: true }).click();
    await expect.poll(adminMembers, { timeout: 5000 }).toBe('0');
  });

  it('takes a deleted group off its members on the Users screen without a reload', async () => {
    const group = await call(app, 'POST', '/api/v1/groups', { token: apiKey, body: { name: 'Sales' } });
    expect(group.status).toBe(201);
    const member = await call(app, 'POST', `/api/v1/groups/${group.body.data.id}/members`, { token: apiKey, body: { user_id: adaId } });
    expect(member.status).toBe(201);
    await nav().getByRole('link', { name: 'Users', exact: true }).click();
    await owner.reload();
    const row = owner.getByRole('row', { name: new RegExp(ada) });
    await expect.poll(() => row.locator('td').nth(3).textContent(), { timeout: 5000 }).toBe('Sales');

    await nav().getByRole('link', { name: 'Groups', exact: true }).click();
    await owner.getByRole('button', { name: 'Delete the group Sales', exact: true }).click();
    await owner.getByRole('dialog', { name: 'Delete the group Sales?' }).getByRole('button', { name: 'Delete', exact: true }).click();
    await owner.getByText('No groups yet').waitFor();
    await nav().getByRole('link', { name: 'Users', exact: true }).click();
    await expect.poll(() => row.locator('td').nth(3).textContent(), { timeout: 5000 }).toBe('—');
  });

  it('finishes the setup of an authenticator app whose dialog was closed before its code was confirmed', async () => {
    await nav().getByRole('link', { name: 'Account & security', exact: true }).click();
    await owner.getByRole('button', { name: 'Add an authenticator app', exact: true }).click();
    const adding = owner.getByRole('dialog', { name: 'Add an authenticator app', exact: true });
    await adding.getByLabel('Name', { exact: true }).fill('Tablet');
    await adding.getByRole('button', { name: 'Continue', exact: true }).click();
    const firstKey = await adding.getByLabel('Setup key', { exact: true }).inputValue();
    await adding.getByRole('button', { name: 'Close', exact: true }).click();
    const apps = owner.getByRole('table', { name: 'Your authenticator apps', exact: true });
    await apps.getByRole('row', { name: /Tablet.*Pending verification/ }).waitFor();

    await apps.getByRole('button', { name: 'Finish setting up Tablet', exact: true }).click();
    const finishing = owner.getByRole('dialog', { name: 'Finish setting up Tablet', exact: true });
    expect(await finishing.getByLabel('Name', { exact: true }).inputValue()).toBe('Tablet');
    await finishing.getByRole('button', { name: 'Show a new key', exact: true }).click();
    const key = finishing.getByLabel('Setup key', { exact: true });
    await key.waitFor();
    const secondKey = await key.inputValue();
    expect(secondKey).not.toBe(firstKey);
    // The unconfirmed app is replaced, not doubled, and the dialog stays while its row goes.
    await expect.poll(() => apps.getByRole('row', { name: /Tablet/ }).count()).toBe(1);
    const device = new TotpDevice(secondKey, app.clock);
    await finishing.getByLabel('Six-digit code from the app', { exact: true }).fill(device.nextCode());
    await finishing.getByRole('button', { name: 'Confirm', exact: true }).click();
    await owner.getByRole('status').filter({ hasText: 'Tablet is confirmed' }).waitFor();
    await apps.getByRole('row', { name: /Tablet.*Verified/ }).waitFor();
    expect(await apps.getByRole('row', { name: /Tablet/ }).count()).toBe(1);
    expect(chromium.problems).toEqual([]);
  });

  it('sends a tab whose session was ended elsewhere to the sign-in page on its next action, saying so, and back where it was after signing in again', async () => {
    const tab = await chromium.newPage();
    await tab.goto(`${app.url}/login?workspace=${workspaceId}`);
    await tab.getByLabel('Email', { exact: true }).fill(ada);
    await tab.getByLabel('Password', { exact: true }).fill('a long passphrase');
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Account & security', exact: true }).waitFor();
    // Ada ends all her sessions from another device.
    const elsewhere = await signIn(app, workspaceId, ada, 'a long passphrase');
    const revoked = await call(app, 'POST', '/api/v1/auth/sessions/revoke-all', { token: elsewhere.accessToken, body: {} });
    expect(revoked.status).toBe(200);

    await tab.getByRole('button', { name: 'Add an authenticator app', exact: true }).click();
    const adding = tab.getByRole('dialog', { name: 'Add an authenticator app', exact: true });
    await adding.getByLabel('Name', { exact: true }).fill('Phone');
    await adding.getByRole('button', { name: 'Continue', exact: true }).click();
    await tab.waitForURL('**/login?**');
    await tab.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
    expect(new URL(tab.url()).searchParams.get('next')).toBe('/dashboard/account');
    await tab.getByLabel('Password', { exact: true }).fill('a long passphrase');
    await tab.getByLabel('Email', { exact: true }).fill(ada);
    await tab.getByRole('button', { name: 'Sign in', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Account & security', exact: true }).waitFor();

    // Signing out here is not a session ended elsewhere.
    await tab.getByRole('button', { name: 'Sign out', exact: true }).click();
    await tab.waitForURL('**/login?signed_out=1');
    await tab.getByText('You are signed out.').waitFor();
    expect(await tab.getByText('Your session has ended').count()).toBe(0);
    expect(chromium.problems).toEqual([]);
    await tab.close();
  });
});
