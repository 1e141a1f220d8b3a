/**
 * The console's shell in a real browser: served by the control plane with a strict policy, deep
 * links, sign-in with its one refusal message, screens shown by capability, sign-out.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { launchBrowser, openConsole, signInThroughPage } from '../helpers/browser.ts';
import { CONSOLE_PAGES } from '../../src/planes/control/console-pages.ts';

let t: TestGateway;
let root: Admin;
let browser: Browser;
let control: string;

before(async () => {
  t = await startTestGateway();
  control = t.url('control');
  root = await signInAdmin(control);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

test('the control plane serves the console: a strict policy, the page revalidated, hashed files kept a year, every screen a deep link', async () => {
  const index = await call(`${control}/`);
  assert.equal(index.status, 200);
  assert.match(String(index.headers['content-type']), /^text\/html/);
  const csp = String(index.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/, 'no inline script, nothing from elsewhere');
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(index.headers['cache-control'], 'no-cache');
  assert.doesNotMatch(index.text, /<script(?![^>]*\bsrc=)[^>]*>/, 'every script of the page is a file');
  assert.doesNotMatch(index.text, /https?:\/\//, 'nothing fetched from outside');

  const assets = [...index.text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `assets: ${assets}`);
  for (const a of assets) {
    const r = await call(`${control}${a}`);
    assert.equal(r.status, 200, a);
    assert.equal(r.headers['cache-control'], 'public, max-age=31536000, immutable', a);
    assert.doesNotMatch(r.text, /https?:\/\/(?!www\.w3\.org)/, `${a} names no outside address`);
    const again = await call(`${control}${a}`, { headers: { 'if-none-match': String(r.headers.etag) } });
    assert.equal(again.status, 304, `${a} revalidates`);
  }

  for (const page of CONSOLE_PAGES) {
    const r = await call(`${control}${page}`);
    assert.equal(r.status, 200, page);
    assert.equal(r.text, index.text, `${page} loads the application`);
  }
  const head = await call(`${control}/scheduler`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.text, '');

  // Anything else stays the API's: an unknown address is a problem document, not the page.
  const unknown = await call(`${control}/no-such-page`);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'not-found');
  const post = await call(`${control}/scheduler`, { method: 'POST', body: {} });
  assert.notEqual(post.status, 200);
});

test('sign-in shows one refusal for a wrong password, an unknown name and a disabled account; root then sees every screen and signs out', async () => {
  const created = await root.post('/api/accounts', { name: 'gone', password: 'gone-password-1', capabilities: ['app-admin'] });
  assert.equal(created.status, 201, created.text);
  assert.equal((await root.patch(`/api/accounts/${created.json.id}`, { disabled: true })).status, 200);

  const c = await openConsole(browser, control);
  try {
    await c.page.goto('/');
    await c.page.getByRole('heading', { level: 1, name: 'Sign in to Meerkat' }).waitFor();
    const refusals: string[] = [];
    for (const [name, password] of [['root', 'not-the-password'], ['nobody-here', 'whatever-password'], ['gone', 'gone-password-1']] as const) {
      await c.page.getByLabel('Name').fill(name);
      await c.page.getByLabel('Password').fill(password);
      await c.page.getByRole('button', { name: 'Sign in' }).click();
      const alert = c.page.getByRole('alert');
      await alert.waitFor();
      refusals.push((await alert.textContent()) ?? '');
      await c.screenshot('sign-in-refused');
    }
    assert.equal(new Set(refusals).size, 1, `one message: ${JSON.stringify(refusals)}`);
    assert.equal(refusals[0], 'The name or the password is not right.');

    await signInThroughPage(c);
    const nav = c.page.getByRole('navigation', { name: 'Screens' });
    for (const name of ['Scheduler', 'TLS', 'Audit', 'Logs', 'Metrics', 'Access']) {
      await nav.getByRole('link', { name }).waitFor();
    }
    // A link moves without reloading, and the address is the screen's.
    await nav.getByRole('link', { name: 'Logs' }).click();
    await c.page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
    assert.equal(new URL(c.page.url()).pathname, '/logs');
    // A reload on a deep link lands on the same screen.
    await c.page.goto('/data-plane/metrics');
    await c.page.getByRole('heading', { level: 1, name: 'Metrics' }).waitFor();

    await c.page.getByRole('button', { name: 'Sign out' }).click();
    await c.page.getByRole('heading', { level: 1, name: 'Sign in to Meerkat' }).waitFor();
    const session = await c.page.evaluate(async () => (await fetch('/api/session')).status);
    assert.equal(session, 401, 'the session ended on the gateway, not only on the page');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('an account sees in the navigation the screens its capabilities open, on a phone-width screen', async () => {
  const created = await root.post('/api/accounts', { name: 'scheduler-ops', password: 'scheduler-ops-pw-1', capabilities: ['app-admin'] });
  assert.equal(created.status, 201, created.text);
  const c = await openConsole(browser, control, { width: 390, height: 844 });
  try {
    await signInThroughPage(c, 'scheduler-ops', 'scheduler-ops-pw-1', '/scheduler');
    await c.page.getByRole('heading', { level: 1, name: 'Scheduler' }).waitFor();
    const nav = c.page.getByRole('navigation', { name: 'Screens' });
    const links = (await nav.getByRole('link').allTextContents()).sort();
    assert.deepEqual(links, ['Access', 'Audit', 'Scheduler']);
    await c.screenshot('shell-phone');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});
