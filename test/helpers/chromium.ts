import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package (.ci/run installs it); playwright-core never downloads a browser. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the browser tests leave screenshots of the main screens (ignored by git; docs/screenshots holds copies). */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-results', 'screenshots');

export interface Chromium {
  context: BrowserContext;
  /** A new tab. Tabs share cookies and localStorage, not sessionStorage: each tab is its own dashboard session. */
  newPage(): Promise<Page>;
  /**
   * Console errors and uncaught exceptions of every tab (CSP and Trusted Types violations are console
   * errors), except Chromium's notes on what it was answered (BROWSER_NOTICES).
   */
  problems: string[];
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/**
 * Console errors that are Chromium's notes on what it was answered, not the page's faults: the API's
 * own 4xx answers, and the service's `Cross-Origin-Opener-Policy` header, which Chromium ignores (and
 * says so) on an origin it does not count as secure (plain http at a host other than localhost).
 */
const BROWSER_NOTICES = [
  'Failed to load resource',
  "The Cross-Origin-Opener-Policy header has been ignored, because the URL's origin was untrustworthy.",
];

/**
 * Headless Chromium in a fresh profile directory, with the flags this machine needs (its closed
 * network refuses Chromium's background connections), and host names of the test's own if asked.
 */
export async function launchChromium(options: { hostResolverRules?: string } = {}): Promise<Chromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'chromium-profile-'));
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
      // A name for 127.0.0.1 (`MAP dash.test 127.0.0.1`): an origin Chromium does not count as secure, as a LAN address is not.
      ...(options.hostResolverRules ? [`--host-resolver-rules=${options.hostResolverRules}`] : []),
    ],
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error' && !BROWSER_NOTICES.some((notice) => message.text().startsWith(notice)))
        problems.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    problems,
    newPage: () => context.newPage(),
    async screenshot(page, name) {
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true, animations: 'disabled' });
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Signs `account` in through the dashboard's sign-in form on a fresh page; answers the page, on the Users screen. */
export async function signedInPage(
  browser: Chromium,
  appUrl: string,
  workspaceId: string,
  account: { email: string; password: string },
): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${appUrl}/login?workspace=${workspaceId}`);
  await page.getByLabel('Email', { exact: true }).fill(account.email);
  await page.getByLabel('Password', { exact: true }).fill(account.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL('**/dashboard/users');
  return page;
}
