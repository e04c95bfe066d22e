import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../scripts/web-build.ts';
import { PLATFORM_TOKEN, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumAvailable, launchChromium, signedInPage, type Chromium } from '../helpers/chromium.ts';
import { call } from '../helpers/http.ts';
import { uniqueEmail } from '../helpers/workspace.ts';

/**
 * Every paged list of the dashboard keeps its page and filters in the address (ui/data/use-list-params.ts),
 * as Users does: reload, Back and Forward show the same page. One service, one browser, the owner in one tab.
 */
describe.runIf(chromiumAvailable() || process.env.CI)('the page of a dashboard list, in the address', () => {
  let app: TestApp;
  let chromium: Chromium;
  let owner: Page;
  let base: string;

  beforeAll(async () => {
    await ensureWebBuild();
    app = await startTestApp();
    const account = { email: uniqueEmail('olivia'), password: 'correct horse battery' };
    const res = await call(app, 'POST', '/platform/v1/workspaces', { token: PLATFORM_TOKEN, body: { name: 'Acme Corp', owner: account } });
    expect(res.status).toBe(201);
    const apiKey: string = res.body.data.api_key;
    // 21 of each: one past the dashboard's 20 a page.
    for (let i = 1; i <= 21; i++) {
      const group = await call(app, 'POST', '/api/v1/groups', { token: apiKey, body: { name: `Team ${String(i).padStart(2, '0')}` } });
      expect(group.status).toBe(201);
      const invitation = await call(app, 'POST', '/api/v1/invitations', { token: apiKey, body: { email: uniqueEmail('invitee') } });
      expect(invitation.status).toBe(201);
    }
    base = `${app.url}/dashboard`;
    chromium = await launchChromium();
    owner = await signedInPage(chromium, app.url, res.body.data.workspace.id, account);
  });
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  const pagesOf = (noun: string) => owner.getByRole('navigation', { name: `Pages of ${noun}`, exact: true });

  it('keeps the page of Groups, and its search, through reload, Back and Forward', async () => {
    const nav = owner.getByRole('navigation', { name: 'Dashboard', exact: true });
    await nav.getByRole('link', { name: 'Groups', exact: true }).click();
    const pages = pagesOf('groups');
    await pages.getByText('1–20 of 21 groups · page 1 of 2').waitFor();
    await pages.getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/groups?page=2`);
    await pages.getByText('21–21 of 21 groups · page 2 of 2').waitFor();

    await owner.reload();
    await pages.getByText('21–21 of 21 groups · page 2 of 2').waitFor();
    await owner.goBack();
    await owner.waitForURL(`${base}/groups`);
    await pages.getByText('1–20 of 21 groups · page 1 of 2').waitFor();
    await owner.goForward();
    await owner.waitForURL(`${base}/groups?page=2`);
    await pages.getByText('21–21 of 21 groups · page 2 of 2').waitFor();

    // A search starts at its first page and is kept too, in the address and in the search box.
    await owner.getByLabel('Search', { exact: true }).fill('Team 1');
    await owner.getByRole('button', { name: 'Search', exact: true }).click();
    await owner.waitForURL(`${base}/groups?q=Team+1`);
    await pages.getByText('1–10 of 10 groups · page 1 of 1').waitFor();
    await owner.reload();
    await pages.getByText('1–10 of 10 groups · page 1 of 1').waitFor();
    expect(await owner.getByLabel('Search', { exact: true }).inputValue()).toBe('Team 1');
    await owner.goBack();
    await owner.waitForURL(`${base}/groups?page=2`);
    await pages.getByText('21–21 of 21 groups · page 2 of 2').waitFor();
    expect(await owner.getByLabel('Search', { exact: true }).inputValue()).toBe('');

    // A page past the last (an old link) shows the last page, replacing the address.
    await owner.goto(`${base}/groups?page=7`);
    await owner.waitForURL(`${base}/groups?page=2`);
    await pages.getByText('21–21 of 21 groups · page 2 of 2').waitFor();
  });

  it('keeps the page and status filter of Invitations through reload, Back and Forward', async () => {
    await owner.goto(`${base}/invitations`);
    const pages = pagesOf('invitations');
    const status = owner.getByLabel('Status', { exact: true });
    await pages.getByText('1–20 of 21 invitations · page 1 of 2').waitFor();
    expect(await status.inputValue()).toBe('pending');
    await pages.getByRole('button', { name: 'Next page', exact: true }).click();
    await owner.waitForURL(`${base}/invitations?page=2`);
    await pages.getByText('21–21 of 21 invitations · page 2 of 2').waitFor();
    await owner.reload();
    await pages.getByText('21–21 of 21 invitations · page 2 of 2').waitFor();

    // "Any status" is not the default (pending), so the address says so and a reload keeps it.
    await status.selectOption('');
    await owner.waitForURL(`${base}/invitations?status=`);
    await pages.getByText('1–20 of 21 invitations · page 1 of 2').waitFor();
    await owner.reload();
    await pages.getByText('1–20 of 21 invitations · page 1 of 2').waitFor();
    expect(await status.inputValue()).toBe('');
    await status.selectOption('accepted');
    await owner.waitForURL(`${base}/invitations?status=accepted`);
    await owner.getByText('No accepted invitations').waitFor();

    await owner.goBack();
    await owner.waitForURL(`${base}/invitations?status=`);
    await expect.poll(() => status.inputValue()).toBe('');
    await owner.goBack();
    await owner.waitForURL(`${base}/invitations?page=2`);
    await pages.getByText('21–21 of 21 invitations · page 2 of 2').waitFor();
    expect(await status.inputValue()).toBe('pending');
    await owner.goForward();
    await owner.waitForURL(`${base}/invitations?status=`);
    await pages.getByText('1–20 of 21 invitations · page 1 of 2').waitFor();
  });

  it('ran every page without a script error or a Content-Security-Policy violation', () => {
    expect(chromium.problems).toEqual([]);
  });
});
