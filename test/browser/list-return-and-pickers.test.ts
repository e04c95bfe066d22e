import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumAvailable, launchChromium, signedInPage, type Chromium } from '../helpers/chromium.ts';
import { login } from '../helpers/auth.ts';
import { call } from '../helpers/http.ts';
import { uniqueEmail } from '../helpers/workspace.ts';

const pad = (i: number) => String(i).padStart(3, '0');

/**
 * The inputs of every call the tab makes to the tRPC query `procedure` from now on. The dashboard's
 * batched GETs name their procedures in the path (`/trpc/a,b`) and their inputs by position.
 */
function callsOf(page: Page, procedure: string): Record<string, unknown>[] {
  const inputs: Record<string, unknown>[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!url.pathname.startsWith('/trpc/')) return;
    const names = decodeURIComponent(url.pathname.slice('/trpc/'.length)).split(',');
    const all = JSON.parse(url.searchParams.get('input') ?? '{}') as Record<string, Record<string, unknown>>;
    names.forEach((name, i) => {
      if (name === procedure) inputs.push((url.searchParams.has('batch') ? all[String(i)] : all) ?? {});
    });
  });
  return inputs;
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * An item opened from a page of its list goes back to that page (ui/navigation/list-links.tsx), the
 * user dialog's lists hold every entry, not the first 100 (ui/data/all-pages.ts), and its pickers find
 * any entry by searching the server, a page at a time (ui/forms/SearchPicker.tsx). The data
 * goes in through the REST API, many calls at once. One service, one browser, the owner in one tab.
 */
describe.runIf(chromiumAvailable() || process.env.CI)('ways back to a list, and lists and pickers past 100', () => {
  let app: TestApp;
  let chromium: Chromium;
  let owner: Page;
  let base: string;
  let apiKey: string;
  let workspaceId: string;
  const account = { email: uniqueEmail('olivia'), password: 'correct horse battery' };
  const ada = uniqueEmail('ada');

  const post = async (path: string, body: Record<string, unknown> = {}) => {
    const res = await call(app, 'POST', path, { token: apiKey, body });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201);
    return res.body.data as { id: string };
  };
  const pagesOf = (noun: string) => owner.getByRole('navigation', { name: `Pages of ${noun}`, exact: true });

  beforeAll(async () => {
    await ensureWebBuild();
    // The endpoints point at this machine (nothing listens there; their deliveries fail, which is fine).
    app = await startTestApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
    const res = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name: 'Acme Corp', owner: account } });
    expect(res.status).toBe(201);
    apiKey = res.body.data.api_key;
    workspaceId = res.body.data.workspace.id;
    base = `${app.url}/dashboard`;

    const adaId = (await post('/api/v1/users', { email: ada, password: 'a long passphrase' })).id;
    // 41 endpoints (page 3 at 20 a page), each for an event nobody causes here, so that their deliveries
    // are the test events sent below; 21 actions (page 2); 125 groups, ada in the first 120.
    await Promise.all(
      range(1, 41).map((i) => post('/api/v1/webhooks/', { url: `http://127.0.0.1:9/hook-${pad(i)}`, event_types: ['user.deleted'] })),
    );
    await Promise.all(
      range(1, 21).map((i) => post('/api/v1/actions', { name: `Action ${pad(i)}`, code: 'exports.onExecutePostLogin = async () => {};' })),
    );
    const groups = await Promise.all(range(1, 125).map((i) => post('/api/v1/groups', { name: `Group ${pad(i)}` })));
    await Promise.all(groups.slice(0, 120).map((g) => post(`/api/v1/groups/${g.id}/members`, { user_id: adaId })));
    // 120 custom roles after the built-in ones; the last 20 created later than the rest (roles list by
    // creation), so they are past the first 100 whatever the ids. Ada holds the first 110, and member.
    const roles = await Promise.all(range(1, 100).map((i) => post('/api/v1/roles', { name: `Role ${pad(i)}`, key: `role-${pad(i)}` })));
    app.clock.advance(1000);
    roles.push(
      ...(await Promise.all(range(101, 120).map((i) => post('/api/v1/roles', { name: `Role ${pad(i)}`, key: `role-${pad(i)}` })))),
    );
    await Promise.all(roles.slice(0, 110).map((r) => post('/api/v1/roles/assign', { user_id: adaId, role_id: r.id })));

    chromium = await launchChromium();
    owner = await signedInPage(chromium, app.url, workspaceId, account);
  });
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  it("goes back from an endpoint's deliveries to the page of Webhooks it was opened from, after paging the deliveries too", async () => {
    await owner.goto(`${base}/webhooks?page=3`);
    await pagesOf('endpoints').getByText('41–41 of 41 endpoints · page 3 of 3').waitFor();
    const opener = owner.getByRole('link', { name: /^Deliveries of / });
    const url = (await opener.getAttribute('aria-label'))?.replace('Deliveries of ', '') ?? '';
    const endpointId = /\/dashboard\/webhooks\/([^/?]+)$/.exec((await opener.getAttribute('href')) ?? '')?.[1] ?? '';
    // 21 deliveries: two pages of them.
    await Promise.all(range(1, 21).map(() => post(`/api/v1/webhooks/${endpointId}/test`)));

    await opener.click();
    await owner.waitForURL(`${base}/webhooks/${endpointId}`);
    await owner.getByRole('heading', { name: 'Deliveries', exact: true }).waitFor();
    await owner.getByText(url, { exact: true }).waitFor();
    await pagesOf('deliveries').getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/webhooks/${endpointId}?page=2`);
    await pagesOf('deliveries').getByText('21–21 of 21 deliveries · page 2 of 2').waitFor();
    // A reload keeps the way back too (the router's state lives in the tab's history entry).
    await owner.reload();
    await pagesOf('deliveries').getByText('21–21 of 21 deliveries · page 2 of 2').waitFor();

    await owner.getByRole('link', { name: 'Back to webhooks', exact: true }).click();
    await owner.waitForURL(`${base}/webhooks?page=3`);
    await pagesOf('endpoints').getByText('41–41 of 41 endpoints · page 3 of 3').waitFor();

    // Opened another way (a typed address), the way back is the list's first page.
    await owner.goto(`${base}/webhooks/${endpointId}`);
    await owner.getByRole('link', { name: 'Back to webhooks', exact: true }).click();
    await owner.waitForURL(`${base}/webhooks`);
    await pagesOf('endpoints').getByText('1–20 of 41 endpoints · page 1 of 3').waitFor();
  });

  it('goes back from an action, and after deleting it, to the page of Actions it was opened from', async () => {
    await owner.goto(`${base}/actions?page=2`);
    const pages = pagesOf('actions');
    await pages.getByText('21–21 of 21 actions · page 2 of 2').waitFor();
    const actions = owner.getByRole('table', { name: 'Actions', exact: true });
    const name = (await actions.getByRole('link').first().textContent()) ?? '';
    await actions.getByRole('link', { name, exact: true }).click();
    await owner.getByRole('heading', { name, exact: true }).waitFor();
    await owner.getByRole('link', { name: 'Back to actions', exact: true }).click();
    await owner.waitForURL(`${base}/actions?page=2`);
    await pages.getByText('21–21 of 21 actions · page 2 of 2').waitFor();

    await actions.getByRole('link', { name, exact: true }).click();
    await owner.getByRole('heading', { name, exact: true }).waitFor();
    await owner.getByRole('button', { name: `Delete ${name}`, exact: true }).click();
    await owner.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    // Back to where it was opened from; that page is now past the end, so the list moves to its last page.
    await owner.waitForURL(`${base}/actions`);
    await pages.getByText('1–20 of 20 actions · page 1 of 1').waitFor();
  });

  it("shows all 120 of a user's groups; the picker offers a page of groups and finds the others by search", async () => {
    const reads = callsOf(owner, 'groups.list');
    await owner.goto(`${base}/users`);
    await owner.getByRole('button', { name: `Roles and groups of ${ada}`, exact: true }).click();
    const access = owner.getByRole('dialog', { name: `Roles and groups of ${ada}`, exact: true });
    const memberOf = access.getByRole('list', { name: `Groups of ${ada}`, exact: true }).getByRole('listitem');
    await expect.poll(() => memberOf.count(), { timeout: 10_000 }).toBe(120);
    await memberOf.getByText('Group 120', { exact: true }).waitFor();

    const picker = access.getByLabel('Group', { exact: true });
    // The first 20 by name are all hers: nothing else to offer until she searches.
    await access.getByText('The first 20 of 125 groups: type more to find the others.', { exact: true }).waitFor();
    expect(await picker.locator('option').allTextContents()).toEqual(['Choose a group']);
    await access.getByLabel('Find a group', { exact: true }).fill('group 12');
    await expect
      .poll(() => picker.locator('option').allTextContents(), { timeout: 10_000 })
      .toEqual(['Choose a group', ...range(121, 125).map((i) => `Group ${pad(i)}`)]);
    await picker.selectOption({ label: 'Group 125' });
    await access.getByRole('button', { name: 'Add to group', exact: true }).click();
    await expect.poll(() => memberOf.count(), { timeout: 10_000 }).toBe(121);
    // One page at a time, never the whole list.
    expect(reads).toContainEqual({ page: 1, per_page: 20 });
    expect(reads).toContainEqual({ q: 'group 12', page: 1, per_page: 20 });
    expect(reads.filter((input) => input.page !== 1 || input.per_page !== 20)).toEqual([]);
    await access.getByRole('button', { name: 'Close', exact: true }).click();
  });

  const openAccess = async () => {
    await owner.goto(`${base}/users`);
    await owner.getByRole('button', { name: `Roles and groups of ${ada}`, exact: true }).click();
    const access = owner.getByRole('dialog', { name: `Roles and groups of ${ada}`, exact: true });
    return { access, held: access.getByRole('list', { name: `Roles of ${ada}`, exact: true }).getByRole('listitem') };
  };

  it("shows all 111 of a user's roles", async () => {
    const { access, held } = await openAccess();
    await expect.poll(() => held.count(), { timeout: 10_000 }).toBe(111);
    await held.getByText('Role 110', { exact: true }).waitFor();
    await access.getByRole('button', { name: 'Close', exact: true }).click();
  });

  it("finds the role created 120th through the role picker's search, reading one page at a time", async () => {
    const reads = callsOf(owner, 'roles.list');
    const { access, held } = await openAccess();
    const picker = access.getByLabel('Role', { exact: true });
    // The first page: built-ins first, the ones she holds left out.
    await access.getByText('The first 20 of 124 roles: type more to find the others.', { exact: true }).waitFor();
    // Built-ins made in one instant come by id, so in any order among themselves.
    expect((await picker.locator('option').allTextContents()).sort()).toEqual(['Choose a role', 'admin', 'owner', 'viewer']);
    await access.getByLabel('Find a role', { exact: true }).fill('Role 120');
    await expect.poll(() => picker.locator('option').allTextContents(), { timeout: 10_000 }).toEqual(['Choose a role', 'Role 120']);
    await picker.selectOption({ label: 'Role 120' });
    await access.getByRole('button', { name: 'Give role', exact: true }).click();
    await held.getByText('Role 120', { exact: true }).waitFor();
    expect(reads).toContainEqual({ q: 'Role 120', page: 1, per_page: 20 });
    expect(reads.filter((input) => input.page !== 1 || input.per_page !== 20)).toEqual([]);
    await access.getByRole('button', { name: 'Close', exact: true }).click();
  });

  it('pages through Roles (124 of them) instead of showing the first 100', async () => {
    await owner.goto(`${base}/roles?page=7`);
    await pagesOf('roles').getByText('121–124 of 124 roles · page 7 of 7').waitFor();
    // The last 20 share one creation time, so which 4 of them come last is the API's order among equals.
    const last = await call(app, 'GET', '/api/v1/roles?page=7&per_page=20', { token: apiKey });
    const names = (last.body.data as { name: string }[]).map((role) => role.name);
    expect(names).toHaveLength(4);
    const table = owner.getByRole('table', { name: 'Roles', exact: true });
    for (const name of names) await table.getByText(name, { exact: true }).waitFor();
  });

  it('pages through API keys instead of showing the first 100', async () => {
    // 21 more: with the workspace's first key, 22, two pages.
    await Promise.all(range(1, 21).map((i) => post('/api/v1/api-keys', { name: `Key ${pad(i)}` })));
    await owner.goto(`${base}/api-keys`);
    await pagesOf('API keys').getByText('1–20 of 22 API keys · page 1 of 2').waitFor();
    await pagesOf('API keys').getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/api-keys?page=2`);
    await pagesOf('API keys').getByText('21–22 of 22 API keys · page 2 of 2').waitFor();
  });

  it('pages through your sessions instead of showing the first 100', async () => {
    // 21 more sign-ins (each from its own address, under the sign-in limit): with the browser's, 22.
    const signIns = await Promise.all(range(1, 21).map(() => login(app, workspaceId, account.email, account.password)));
    expect(signIns.map((r) => r.status)).toEqual(range(1, 21).map(() => 200));
    await owner.goto(`${base}/account`);
    await pagesOf('sessions').getByText('1–20 of 22 sessions · page 1 of 2').waitFor();
    await pagesOf('sessions').getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/account?page=2`);
    await pagesOf('sessions').getByText('21–22 of 22 sessions · page 2 of 2').waitFor();
  });

  it("keeps the account page's other address parameters when paging your sessions", async () => {
    await owner.goto(`${base}/account?welcome=1`);
    const welcome = owner.getByText('Welcome! Your account is ready.', { exact: false });
    await welcome.waitFor();
    await pagesOf('sessions').getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/account?welcome=1&page=2`);
    await pagesOf('sessions').getByText('21–22 of 22 sessions · page 2 of 2').waitFor();
    await welcome.waitFor();
    await pagesOf('sessions').getByRole('button', { name: 'Previous page', exact: true }).click();
    await owner.waitForURL(`${base}/account?welcome=1`);
    await pagesOf('sessions').getByText('1–20 of 22 sessions · page 1 of 2').waitFor();
  });

  it('ran every page without a script error or a Content-Security-Policy violation', () => {
    expect(chromium.problems).toEqual([]);
  });
});
