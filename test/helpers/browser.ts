/**
 * A real browser for the console's tests: Debian's Chromium driven by playwright-core. Every page
 * records what the browser reports as an error (a script failure, a Content-Security-Policy
 * violation, a failed load), and `expectClean` fails the test on any. Screenshots go to
 * test/.artifacts/console/ (git-ignored), one per screen.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import assert from 'node:assert/strict';
import { ROOT_PASSWORD } from './gateway.ts';

export const CHROMIUM = process.env.MEERKAT_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../.artifacts/console/', import.meta.url));

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export interface ConsolePage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** What the browser reported as errors so far. */
  readonly problems: string[];
  /** Fails on any error the browser reported (CSP violations included). */
  expectClean(): void;
  screenshot(name: string): Promise<void>;
}

/**
 * A fresh browser context (its own cookies) on the console at `base`. `acceptAnyCertificate`: an
 * HTTPS door whose certificate no authority the browser knows signed (a test's self-signed one).
 */
export async function openConsole(browser: Browser, base: string, viewport = { width: 1280, height: 800 }, acceptAnyCertificate = false): Promise<ConsolePage> {
  const context = await browser.newContext({ baseURL: base, viewport, timezoneId: 'Europe/Paris', locale: 'en-GB', ignoreHTTPSErrors: acceptAnyCertificate });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A refused API answer is the browser's "Failed to load resource" console line: expected where
    // a test provokes a refusal, so only script errors and policy violations count.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return {
    page,
    context,
    problems,
    expectClean: () => assert.deepEqual(problems, [], 'the browser reported errors'),
    screenshot: async (name) => {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true });
    },
  };
}

/** Signs in through the sign-in page, as an operator does. */
export async function signInThroughPage(c: ConsolePage, name = 'root', password = ROOT_PASSWORD, path = '/'): Promise<void> {
  await c.page.goto(path);
  await c.page.getByLabel('Name').fill(name);
  await c.page.getByLabel('Password').fill(password);
  await c.page.getByRole('button', { name: 'Sign in' }).click();
  await c.page.getByRole('button', { name: 'Sign out' }).waitFor();
}
