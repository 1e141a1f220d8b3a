/**
 * The Access screen in a real browser (CONTRACT.md "Core resources"): the accounts, roles and
 * routes made through the API are listed; an account is created and disabled from the page; a
 * token is minted with its secret shown once, works against the API, and is revoked from the
 * page; a tab the account may not read shows the API's refusal.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { closedPort } from '../helpers/upstream.ts';
import { launchBrowser, openConsole, signInThroughPage, type ConsolePage } from '../helpers/browser.ts';

let t: TestGateway;
let root: Admin;
let browser: Browser;
let control: string;
let upstream: string;

before(async () => {
  t = await startTestGateway();
  control = t.url('control');
  root = await signInAdmin(control);
  upstream = `http://127.0.0.1:${await closedPort()}`;
  await putOk(root, '/api/roles/staff', {});
  await putOk(root, '/api/roles/manager', { implies: ['staff'] });
  const alice = await root.post('/api/accounts', { name: 'alice', password: 'alice-password-1', roles: ['manager'], capabilities: ['app-admin'] });
  assert.equal(alice.status, 201, alice.text);
  await putOk(root, '/api/routes/orders', { upstream, paths: ['/orders'], rule: { roles: ['staff'] }, endpointRules: [{ method: 'DELETE', path: '/orders/{id}', roles: ['manager'] }] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

/** The row whose first cell is `first` (a row's name is its cells' text in order). */
const rowOf = (c: ConsolePage, table: string, first: string) =>
  c.page.getByRole('table', { name: table }).getByRole('row', { name: new RegExp(`^${first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`) });

async function openTab(c: ConsolePage, name: string): Promise<void> {
  await c.page.getByRole('tab', { name }).click();
  await c.page.getByRole('tabpanel', { name }).waitFor();
  assert.equal(await c.page.getByRole('tab', { name }).getAttribute('aria-selected'), 'true');
}

test('accounts, roles and routes made through the API are listed; an account is created, disabled and enabled from the page', async () => {
  const c = await openConsole(browser, control);
  try {
    await signInThroughPage(c, 'root', undefined, '/access');
    await c.page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
    await c.page.getByRole('tabpanel', { name: 'Accounts' }).waitFor();
    const alice = rowOf(c, 'Accounts', 'alice');
    await alice.waitFor();
    assert.deepEqual((await alice.getByRole('cell').allTextContents()).slice(0, 5), ['alice', 'app-admin', 'manager', '—', 'Active']);

    // The API's sentence when it refuses the form (a short password), and nothing created.
    await c.page.getByLabel('Name', { exact: true }).fill('carol');
    await c.page.getByLabel('Password', { exact: true }).fill('short');
    await c.page.getByRole('button', { name: 'Create account' }).click();
    const refusal = await root.post('/api/accounts', { name: 'carol', password: 'short', roles: [], capabilities: [] });
    assert.equal(refusal.status, 400);
    await c.page.getByRole('alert').filter({ hasText: refusal.json.detail }).waitFor();
    assert.equal(await rowOf(c, 'Accounts', 'carol').count(), 0);

    await c.page.getByLabel('Name', { exact: true }).fill('bob');
    await c.page.getByLabel('Password', { exact: true }).fill('bob-password-12');
    await c.page.getByLabel('Roles').fill('staff');
    await c.page.getByRole('checkbox', { name: 'gateway-admin' }).check();
    await c.page.getByRole('button', { name: 'Create account' }).click();
    await c.page.getByRole('status').filter({ hasText: 'Account bob created.' }).waitFor();
    const bob = rowOf(c, 'Accounts', 'bob');
    await bob.waitFor();
    assert.deepEqual((await bob.getByRole('cell').allTextContents()).slice(0, 5), ['bob', 'gateway-admin', 'staff', '—', 'Active']);
    const made = (await root.get('/api/accounts')).json.accounts.find((a: any) => a.name === 'bob');
    assert.deepEqual([made.capabilities, made.roles, made.disabled], [['gateway-admin'], ['staff'], false]);
    assert.equal((await call(`${control}/api/session`, { method: 'POST', body: { name: 'bob', password: 'bob-password-12' }, headers: { origin: control } })).status, 200);

    await c.page.getByRole('button', { name: 'Disable bob' }).click();
    await bob.getByText('Disabled').waitFor();
    assert.equal((await root.get(`/api/accounts/${made.id}`)).json.disabled, true);
    const refused = await call(`${control}/api/session`, { method: 'POST', body: { name: 'bob', password: 'bob-password-12' }, headers: { origin: control } });
    assert.equal(refused.status, 401, 'a disabled account cannot sign in');
    await c.page.getByRole('button', { name: 'Enable bob' }).click();
    await bob.getByText('Active').waitFor();
    assert.equal((await root.get(`/api/accounts/${made.id}`)).json.disabled, false);

    await openTab(c, 'Roles');
    const manager = rowOf(c, 'Roles', 'manager');
    await manager.waitFor();
    assert.deepEqual(await manager.getByRole('cell').allTextContents(), ['manager', 'staff', 'manager, staff']);
    await c.page.getByLabel('Role name').fill('auditor');
    await c.page.getByLabel('Implies').fill('manager');
    await c.page.getByRole('button', { name: 'Save role' }).click();
    await c.page.getByRole('status').filter({ hasText: 'Role auditor created.' }).waitFor();
    // The status is said before the list is read again: wait for the row, not just the sentence.
    const auditor = rowOf(c, 'Roles', 'auditor');
    await auditor.waitFor();
    assert.deepEqual(await auditor.getByRole('cell').allTextContents(), ['auditor', 'manager', 'auditor, manager, staff']);
    // A cycle is refused with the API's sentence.
    await c.page.getByLabel('Role name').fill('staff');
    await c.page.getByLabel('Implies').fill('auditor');
    await c.page.getByRole('button', { name: 'Save role' }).click();
    const cycle = await root.put('/api/roles/staff', { implies: ['auditor'] });
    assert.equal(cycle.status, 400, cycle.text);
    await c.page.getByRole('alert').filter({ hasText: cycle.json.detail }).waitFor();

    await openTab(c, 'Routes');
    const orders = rowOf(c, 'Routes', 'orders');
    await orders.waitFor();
    const cells = await orders.getByRole('cell').allTextContents();
    assert.deepEqual(cells.slice(0, 8), ['orders', '/orders', 'any', upstream, 'Roles: staff', 'DELETE /orders/{id}: manager', 'headers', 'PT30S']);
    assert.equal(new URL(c.page.url()).search, '?tab=routes', 'the open tab is in the address');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('a token minted in the page shows its secret once, opens the API, and once revoked from the page is refused', async () => {
  const listed = await root.post('/api/tokens', { name: 'jobs-runner', kind: 'schedules', routes: ['orders'], roles: ['staff'], organisations: [] });
  assert.equal(listed.status, 201, listed.text);
  const c = await openConsole(browser, control);
  try {
    await c.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: control });
    await signInThroughPage(c, 'root', undefined, '/access?tab=tokens');
    await c.page.getByRole('tabpanel', { name: 'Tokens' }).waitFor();
    const runner = rowOf(c, 'Tokens', 'jobs-runner');
    await runner.waitFor();
    assert.deepEqual((await runner.getByRole('cell').allTextContents()).slice(0, 4), ['jobs-runner', 'schedules', '—', 'routes orders; roles staff; organisations none']);

    await c.page.getByLabel('Token name').fill('deploy-script');
    await c.page.getByLabel('Kind').selectOption('admin');
    await c.page.getByRole('button', { name: 'Create token' }).click();
    const field = c.page.getByRole('textbox', { name: 'Secret of token deploy-script' });
    await field.waitFor();
    const secret = await field.inputValue();
    assert.match(secret, /^mk_[A-Za-z0-9_-]{43}$/);
    await c.page.getByText('Copy the secret now: it will not be shown again.').waitFor();
    await c.page.getByRole('button', { name: 'Copy' }).click();
    await c.page.getByRole('status').filter({ hasText: 'Copied to the clipboard.' }).waitFor();
    assert.equal(await c.page.evaluate<string>(() => (globalThis as any).navigator.clipboard.readText()), secret);
    const script = rowOf(c, 'Tokens', 'deploy-script');
    await script.waitFor();
    assert.deepEqual((await script.getByRole('cell').allTextContents()).slice(0, 3), ['deploy-script', 'admin', 'root']);
    await c.screenshot('access');

    const asScript = await call(`${control}/api/session`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(asScript.status, 200, asScript.text);
    assert.equal(asScript.json.account.name, 'root');
    assert.equal(asScript.json.via, 'token');

    // Once gone from the page, the secret does not come back.
    await c.page.reload();
    await script.waitFor();
    assert.equal(await c.page.getByRole('textbox', { name: /^Secret of token/ }).count(), 0);
    assert.ok(!(await c.page.content()).includes(secret), 'the secret is nowhere in the page after a reload');

    await c.page.getByRole('button', { name: 'Revoke deploy-script' }).click();
    await c.page.getByRole('button', { name: 'Confirm revoke deploy-script' }).click();
    await script.getByText(/^Revoked/).waitFor();
    await c.page.getByRole('status').filter({ hasText: 'Token deploy-script is revoked' }).waitFor();
    assert.equal(await c.page.getByRole('button', { name: 'Revoke deploy-script' }).count(), 0);
    const after = await call(`${control}/api/session`, { headers: { authorization: `Bearer ${secret}` } });
    assert.equal(after.status, 401, 'the gateway refuses a revoked token');
    assert.notEqual((await root.get('/api/tokens')).json.tokens.find((x: any) => x.name === 'deploy-script').revokedAt, null);
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('an app-admin reads accounts and roles, and the API\'s refusal on tokens, routes and granting a capability, on a phone-width screen', async () => {
  const c = await openConsole(browser, control, { width: 390, height: 844 });
  try {
    await signInThroughPage(c, 'alice', 'alice-password-1', '/access');
    await c.page.getByRole('tabpanel', { name: 'Accounts' }).waitFor();
    await rowOf(c, 'Accounts', 'alice').waitFor();

    await c.page.getByLabel('Name', { exact: true }).fill('dave');
    await c.page.getByLabel('Password', { exact: true }).fill('dave-password-1');
    await c.page.getByRole('checkbox', { name: 'infra-admin' }).check();
    await c.page.getByRole('button', { name: 'Create account' }).click();
    await c.page.getByRole('alert').filter({ hasText: "This action is root's alone." }).waitFor();
    assert.equal((await root.get('/api/accounts')).json.accounts.some((a: any) => a.name === 'dave'), false);

    await openTab(c, 'Tokens');
    await c.page.getByRole('alert').filter({ hasText: "This action is root's alone." }).waitFor();
    assert.equal(await c.page.getByRole('table', { name: 'Tokens' }).count(), 0);
    await openTab(c, 'Routes');
    await c.page.getByRole('alert').filter({ hasText: 'This action needs the infra-admin capability (or root).' }).waitFor();
    await openTab(c, 'Roles');
    await rowOf(c, 'Roles', 'manager').waitFor();
    c.expectClean();
  } finally {
    await c.context.close();
  }
});
