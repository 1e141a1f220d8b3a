/**
 * The Audit screen in a real browser (spec 1.3 rules 2, 5, 8, 10, 14, 16; CONTRACT.md "Audit"):
 * changes made through the API read back with their actor, target and moved fields; the part,
 * period, text and target kind filters; paging with More; console sign-ins with the real reason
 * of a refusal; the CSV export on the licensed edition and its refusal on the community one; the
 * refusal a caller with no audit capability reads.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { expectRefusedScreen, inParis, launchBrowser, openConsole, signInThroughPage, tableReader, type ConsolePage } from '../helpers/browser.ts';
import { until } from '../helpers/until.ts';

let t: TestGateway;
let root: Admin;
let control: string;
let browser: Browser;

before(async () => {
  t = await startTestGateway({ GATEWAY_EDITION: 'licensed' });
  control = t.url('control');
  root = await signInAdmin(control);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

/** Every line handed to the recorder is written (sign-ins go through it, changes do not). */
const settle = () => t.gw.ctx.audit.call('audit.settle', null);

async function trail(query: string): Promise<any[]> {
  await settle();
  const a = await root.get(`/api/audit?${query}`);
  assert.equal(a.status, 200, a.text);
  return a.json.events;
}

const ROUTE = { upstream: 'http://127.0.0.1:9', paths: ['/orders'], timeout: 'PT30S' };
const COLUMNS = ['when', 'part', 'action', 'actor', 'target', 'organisation', 'address', 'detail', 'changes'] as const;
const TRAIL = tableReader('Audit events', COLUMNS, COLUMNS.length);
const rows = TRAIL.read;
const rowsWhen = (page: Page, pred: (r: Awaited<ReturnType<typeof rows>>) => boolean, what: string) =>
  TRAIL.when(page, pred, what, (r) => r.map((x) => [x.action, x.target]));

/** A `datetime-local` value in Paris. */
const localInput = (epoch: number) => new Date(epoch * 1000).toLocaleString('sv-SE', { timeZone: 'Europe/Paris' }).replace(' ', 'T');

async function asRoot(): Promise<ConsolePage> {
  const c = await openConsole(browser, control);
  await signInThroughPage(c, 'root', undefined, '/audit');
  await c.page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
  return c;
}

async function account(name: string, body: Record<string, unknown> = {}): Promise<string> {
  const a = await root.post('/api/accounts', { name, password: `${name}-password-1`, ...body });
  assert.equal(a.status, 201, a.text);
  return a.json.id;
}

test('changes made through the API read back with actor, target, organisation and moved fields; part, text, target kind and period narrow them', async () => {
  await putOk(root, '/api/routes/orders', ROUTE);
  await putOk(root, '/api/routes/orders', { ...ROUTE, timeout: 'PT10S' });
  await putOk(root, '/api/organisations/acme', { name: 'Acme' });
  const minted = await root.post('/api/tokens', { name: 'ci-pipeline', kind: 'admin' });
  assert.equal(minted.status, 201, minted.text);
  const bot = adminWith(control, { authorization: `Bearer ${minted.json.token}` });
  await putOk(bot, '/api/routes/acme-orders', { ...ROUTE, paths: ['/acme'], organisation: 'acme' });
  assert.equal((await root.put('/api/vault/db_password', { value: 'first-secret-value' })).status < 300, true);
  assert.equal((await root.put('/api/vault/db_password', { value: 'second-secret-value' })).status < 300, true);

  const c = await asRoot();
  try {
    const [update] = await trail('kind=route.update&target=orders');
    const all = await rowsWhen(c.page, (r) => r.some((x) => x.action === 'route.update' && x.target === 'route orders'), 'the route update');
    const row = all.find((x) => x.action === 'route.update' && x.target === 'route orders')!;
    assert.deepEqual({ ...row }, {
      when: inParis(update.when), part: 'Changes', action: 'route.update', actor: 'root', target: 'route orders',
      organisation: '', address: '127.0.0.1', detail: '', changes: 'Show 1',
    });
    const agent = all.find((x) => x.target === 'route acme-orders')!;
    assert.equal(agent.actor, 'root, via ci-pipeline', 'a token\'s change names the token');
    assert.equal(agent.organisation, 'acme');
    assert.equal(agent.detail, 'created');
    assert.ok(all.some((x) => x.action === 'signin' && x.part === 'Security'), 'the console sign-in is in All');
    assert.ok(!JSON.stringify(all).includes('secret-value'), 'no vault value on the screen');

    // The moved fields open under the line.
    await c.page.getByRole('button', { name: `Show the 1 change of route.update at ${inParis(update.when)}` }).click();
    const changes = c.page.getByRole('table', { name: 'Changes of route.update' });
    assert.deepEqual(await changes.getByRole('row').allInnerTexts(), ['Field\tFrom\tTo', 'timeoutMs\t30000\t10000']);
    await c.screenshot('audit');
    await c.page.getByRole('button', { name: /^Hide the 1 change of route\.update/ }).click();
    await changes.waitFor({ state: 'detached' });

    const part = c.page.getByRole('group', { name: 'Part' });
    await part.getByRole('button', { name: 'Changes' }).click();
    const onlyChanges = await rowsWhen(c.page, (r) => r.length > 0 && r.every((x) => x.part === 'Changes'), 'the changes half');
    assert.ok(onlyChanges.some((x) => x.action === 'vault.update'));
    assert.equal(await part.getByRole('button', { name: 'Changes' }).getAttribute('aria-pressed'), 'true');

    // Free text looks in the detail and the address.
    await c.page.getByLabel('Text (reason, note, address)').fill('value replaced');
    await c.page.getByRole('button', { name: 'Search' }).click();
    const found = await rowsWhen(c.page, (r) => r.length === 1, 'one line with that note');
    assert.deepEqual([found[0]!.action, found[0]!.target, found[0]!.detail], ['vault.update', 'vault db_password (app/db_password)', 'value replaced']);
    await c.page.getByLabel('Text (reason, note, address)').fill('');
    await c.page.getByRole('button', { name: 'Search' }).click();

    await c.page.getByLabel('Target kind').selectOption('vault');
    const vault = await rowsWhen(c.page, (r) => r.length === 2, 'the vault lines');
    assert.deepEqual(vault.map((x) => x.action), ['vault.update', 'vault.create']);
    await c.page.getByLabel('Target kind').selectOption('route');
    const routes = await rowsWhen(c.page, (r) => r.length === 3, 'the route lines');
    assert.deepEqual(routes.map((x) => [x.action, x.target]), [['route.create', 'route acme-orders'], ['route.update', 'route orders'], ['route.create', 'route orders']]);

    // The header's organisation switch narrows the trail to that organisation's events.
    const switcher = c.page.getByRole('banner').getByLabel('Organisation');
    await switcher.selectOption({ label: 'Acme' });
    const acme = await rowsWhen(c.page, (r) => r.length === 1, 'the route lines of Acme');
    assert.deepEqual(acme.map((x) => [x.target, x.organisation]), [['route acme-orders', 'acme']]);
    await switcher.selectOption({ label: 'All' });
    await rowsWhen(c.page, (r) => r.length === 3, 'the route lines of every organisation again');

    // The period: from after the last line selects nothing; to after it keeps them all.
    const latest = Math.max(...(await trail('targetKind=route')).map((e) => e.when));
    await c.page.getByLabel('From', { exact: true }).fill(localInput(latest + 60));
    await c.page.getByRole('status').filter({ hasText: 'No event matches these filters.' }).waitFor();
    assert.deepEqual(await rows(c.page), []);
    await c.page.getByLabel('From', { exact: true }).fill('');
    await c.page.getByLabel('To', { exact: true }).fill(localInput(latest + 60));
    await rowsWhen(c.page, (r) => r.length === 3, 'the route lines before the end of the period');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('paging: a page of 50, then More adds the next until none remain, in the trail\'s order', async () => {
  for (let i = 0; i < 62; i++) await putOk(root, `/api/roles/paged-${String(i).padStart(2, '0')}`, { implies: [] });
  const expected = (await trail('targetKind=role&limit=500')).map((e) => `role ${e.target.name}`);
  assert.equal(expected.length, 62);

  const c = await asRoot();
  try {
    await c.page.getByLabel('Target kind').selectOption('role');
    const first = await rowsWhen(c.page, (r) => r.length === 50 && r.every((x) => x.target.startsWith('role ')), 'the first page');
    assert.deepEqual(first.map((x) => x.target), expected.slice(0, 50));
    await c.page.getByRole('status').filter({ hasText: '50 events shown, more remain' }).waitFor();
    await c.page.getByRole('button', { name: 'More' }).click();
    const both = await rowsWhen(c.page, (r) => r.length === 62, 'both pages');
    assert.deepEqual(both.map((x) => x.target), expected, 'every line once, newest first');
    await c.page.getByRole('status').filter({ hasText: '62 events shown' }).waitFor();
    assert.equal(await c.page.getByRole('button', { name: 'More' }).count(), 0, 'no More on the last page');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('console sign-ins: a refused sign-in reads with its real reason, the visitor having read one sentence', async () => {
  await account('dave', { capabilities: ['app-admin'] });
  const erin = await account('erin');
  assert.equal((await root.patch(`/api/accounts/${erin}`, { disabled: true })).status, 200);

  // Three refusals through the sign-in page, as a visitor makes them.
  const visitor = await openConsole(browser, control);
  try {
    await visitor.page.goto('/');
    for (const [name, password] of [['dave', 'not-dave-password'], ['erin', 'erin-password-1'], ['nobody-here', 'whatever-password']] as const) {
      await visitor.page.getByLabel('Name').fill(name);
      await visitor.page.getByLabel('Password').fill(password);
      await visitor.page.getByRole('button', { name: 'Sign in' }).click();
      await visitor.page.getByRole('alert').filter({ hasText: 'The name or the password is not right.' }).waitFor();
    }
    visitor.expectClean();
  } finally {
    await visitor.context.close();
  }
  await settle();

  const c = await asRoot();
  try {
    await c.page.getByRole('group', { name: 'Part' }).getByRole('button', { name: 'Console sign-ins' }).click();
    const signins = await rowsWhen(c.page, (r) => r.length > 0 && r.every((x) => x.target.startsWith('console ')) && r.some((x) => x.target === 'console nobody-here'), 'the console sign-ins');
    assert.equal(await c.page.getByLabel('Target kind').isDisabled(), true, 'the part fixes the target kind');
    const refused = (who: string) => signins.find((x) => x.action === 'signin.refused' && x.target.startsWith(`console ${who}`));
    assert.equal(refused('dave')?.detail, 'bad-credentials');
    assert.equal(refused('dave')?.actor, 'dave');
    assert.equal(refused('erin')?.detail, 'disabled', 'the trail states the real reason');
    assert.equal(refused('nobody-here')?.detail, 'bad-credentials');
    assert.equal(refused('nobody-here')?.actor, 'nobody known', 'a name matching no account has no actor');
    assert.equal(refused('dave')?.address, '127.0.0.1');
    assert.ok(signins.some((x) => x.action === 'signin' && x.actor === 'root' && x.detail === 'password'));
    assert.ok(signins.every((x) => x.part === 'Security'));

    // The text filter searches the reason.
    await c.page.getByLabel('Text (reason, note, address)').fill('disabled');
    await c.page.getByRole('button', { name: 'Search' }).click();
    const disabled = await rowsWhen(c.page, (r) => r.length === 1, 'the disabled refusal alone');
    assert.equal(disabled[0]!.target.split(' ')[1], 'erin');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('export: the licensed edition downloads the filtered lines as CSV; the community edition shows its refusal', async () => {
  const c = await asRoot();
  try {
    await c.page.getByLabel('Target kind').selectOption('vault');
    await rowsWhen(c.page, (r) => r.length === 2, 'the vault lines');
    const [file] = await Promise.all([c.page.waitForEvent('download'), c.page.getByRole('button', { name: 'Export CSV' }).click()]);
    assert.equal(file.suggestedFilename(), 'audit.csv');
    const csv = readFileSync((await file.path())!, 'utf8').trim().split(/\r?\n/);
    assert.equal(csv[0], 'when,part,action,actor,token,target_kind,target_id,target_name,organisation,address,detail,changes,trace_id,attributes');
    assert.equal(csv.length, 3, csv.join('\n'));
    assert.match(csv[1]!, /,changes,vault\.update,root,,vault,/);
    assert.match(csv[2]!, /,changes,vault\.create,root,,vault,/);
    const [line] = await trail('kind=audit.export');
    assert.match(line.detail, /^2 rows; filters targetKind=vault$/, 'the export wrote its own line, with the filters on screen');
    c.expectClean();
  } finally {
    await c.context.close();
  }

  const community = await startTestGateway();
  try {
    const other = community.url('control');
    const said = await (await signInAdmin(other)).get('/api/audit/export');
    assert.equal(said.status, 403);
    assert.equal(said.json.code, 'licensed-edition');
    const d = await openConsole(browser, other);
    try {
      await signInThroughPage(d, 'root', undefined, '/audit');
      await d.page.getByRole('button', { name: 'Export CSV' }).click();
      assert.equal(await d.page.getByRole('alert').textContent(), said.json.detail);
      d.expectClean();
    } finally {
      await d.context.close();
    }
  } finally {
    await community.close();
  }
});

test('a caller with no audit capability reads the API\'s refusal, not an empty page', async () => {
  await account('metrics-only', { capabilities: ['gateway-admin'] });
  const said = await (await signInAdmin(control, 'metrics-only', 'metrics-only-password-1')).get('/api/audit');
  assert.equal(said.status, 403);
  assert.equal(said.json.code, 'capability');
  await expectRefusedScreen(browser, control, {
    name: 'metrics-only', password: 'metrics-only-password-1', path: '/audit', heading: 'Audit', detail: said.json.detail,
    absent: (page) => page.getByRole('table'),
    viewport: { width: 390, height: 844 },
  });
});
