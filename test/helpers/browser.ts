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
import { until } from './until.ts';

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

/** Epoch seconds as the console shows them in the pages `openConsole` makes (Paris, en-GB). */
export const inParis = (epoch: number): string => new Date(epoch * 1000).toLocaleString('en-GB', {
  timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
});

/** A console page signed in and on `path`, once its screen's heading shows. */
export async function openScreen(browser: Browser, base: string, path: string, heading: string, name = 'root', password?: string): Promise<ConsolePage> {
  const c = await openConsole(browser, base);
  await signInThroughPage(c, name, password, path);
  await c.page.getByRole('heading', { level: 1, name: heading }).waitFor();
  return c;
}

export interface RefusedScreen {
  readonly name: string;
  readonly password: string;
  /** The screen's address and its `<h1>`. */
  readonly path: string;
  readonly heading: string;
  /** The API's own sentence, read by the test from the API as the same account. */
  readonly detail: string;
  /** What the screen must not offer without the capability (a table, a form's button, a curve). */
  readonly absent: (page: Page) => ReturnType<Page['getByRole']>;
  readonly viewport?: { width: number; height: number };
  /** Anything else to check on the refused screen. */
  readonly also?: (c: ConsolePage) => Promise<void>;
}

/**
 * An account without the screen's capability opens it by its address: the screen shows its name
 * and the API's refusal sentence, never an empty page, and nothing to act on.
 */
export async function expectRefusedScreen(browser: Browser, base: string, s: RefusedScreen): Promise<void> {
  const c = await openConsole(browser, base, s.viewport);
  try {
    await signInThroughPage(c, s.name, s.password, s.path);
    await c.page.getByRole('heading', { level: 1, name: s.heading }).waitFor();
    const alert = c.page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.textContent(), s.detail);
    assert.equal(await s.absent(c.page).count(), 0, `nothing to act on at ${s.path} without the capability`);
    await s.also?.(c);
    c.expectClean();
  } finally {
    await c.context.close();
  }
}

/** What reading a table's rows needs of its element (the tests compile without the DOM's types). */
interface TableLike { readonly tBodies: ArrayLike<{ readonly rows: ArrayLike<{ readonly cells: ArrayLike<{ readonly innerText: string }> }> }> }

/**
 * A table's body rows as the operator reads them, each a record of `columns` in order. `cells`: only the rows
 * with that many cells (a row opened below another, such as an event's changes, is left aside).
 */
export function tableReader<C extends string>(name: string, columns: readonly C[], cells?: number) {
  type Row = Record<C, string>;
  const read = async (page: Page): Promise<Row[]> => {
    const texts = await page.getByRole('table', { name }).evaluate((table, n) =>
      Array.from((table as unknown as TableLike).tBodies[0]!.rows)
        .filter((r) => n === null || r.cells.length === n)
        .map((r) => Array.from(r.cells).map((c) => c.innerText.trim())), cells ?? null);
    return texts.map((r) => Object.fromEntries(columns.map((k, i) => [k, r[i]!])) as Row);
  };
  /** Waits until the rows satisfy `pred` (filters and feeds apply on the gateway: answers take their time). */
  const when = async (page: Page, pred: (rows: Row[]) => boolean, what: string, show: (rows: Row[]) => unknown): Promise<Row[]> => {
    let last: Row[] = [];
    return until(async () => {
      last = await read(page);
      return pred(last) ? last : undefined;
    }, `${what}; rows: ${JSON.stringify(show(last))}`);
  };
  return { read, when };
}
