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
   * errors), except Chromium's "Failed to load resource" lines for the API's own 4xx answers.
   */
  problems: string[];
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

/**
 * Headless Chromium in a fresh profile directory, with the flags this machine needs (its closed
 * network refuses Chromium's background connections).
 */
export async function launchChromium(): Promise<Chromium> {
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
    ],
    viewport: { width: 1280, height: 800 },
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(15_000);
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
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
