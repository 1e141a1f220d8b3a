/**
 * The audit trail's settings in a real browser (spec 1.3 rule 15; CONTRACT.md "Console"): root
 * changes the two retentions on the Audit screen and the API reads them back; a value the gateway
 * refuses shows its sentence and changes nothing; the last sweep and the drops read as the API
 * states them; the other readers of the trail, to whom the API refuses these settings, see the
 * trail without the panel.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Locator } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { advanceClock } from '../helpers/scheduler.ts';
import { inParis, launchBrowser, openScreen, type ConsolePage } from '../helpers/browser.ts';
import { until } from '../helpers/until.ts';

let t: TestGateway;
let root: Admin;
let control: string;
let browser: Browser;

before(async () => {
  // Licensed, so that the push is refused for the missing collector rather than the edition; on
  // the test clock, so that the hourly sweep comes when the test says.
  t = await startTestGateway({ GATEWAY_EDITION: 'licensed', GATEWAY_CLOCK: 'manual' });
  control = t.url('control');
  root = await signInAdmin(control);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
});

async function settings(): Promise<any> {
  const a = await root.get('/api/settings/audit');
  assert.equal(a.status, 200, a.text);
  return a.json;
}

/** What a refused PUT leaves alone (`dropped` moves on its own). */
const chosen = (s: any) => ({ retention: s.retention, operationRetention: s.operationRetention, push: s.push, updatedAt: s.updatedAt, updatedBy: s.updatedBy });

const openAudit = (name = 'root', password?: string): Promise<ConsolePage> => openScreen(browser, control, '/audit', 'Audit', name, password);

const panelOf = (c: ConsolePage): Locator => c.page.getByRole('region', { name: 'Settings' });

async function account(name: string, capabilities: string[]): Promise<void> {
  const a = await root.post('/api/accounts', { name, password: `${name}-password-1`, capabilities });
  assert.equal(a.status, 201, a.text);
}

test('root changes both retentions on the page; the API reads them and the page shows them after a reload', async () => {
  const first = await settings();
  assert.equal(first.retention, 'P1Y');
  assert.equal(first.operationRetention, 'P1M');
  const c = await openAudit();
  try {
    const panel = panelOf(c);
    await panel.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    assert.equal(await c.page.getByRole('heading', { level: 1 }).count(), 1, 'the panel adds no second <h1>');
    const retention = panel.getByLabel('Retention of changes and security lines');
    const operations = panel.getByLabel('Retention of audited operations');
    const save = panel.getByRole('button', { name: 'Save' });
    await until(async () => ((await retention.inputValue()) === 'P1Y' ? true : undefined), 'the settings in the panel');
    assert.deepEqual(await retention.locator('option').allInnerTexts(), ['Three months', 'Six months', 'One year (default)', 'Two years', 'Five years']);
    assert.deepEqual(await retention.locator('option').evaluateAll((o) => o.map((x) => (x as unknown as { value: string }).value)), ['P3M', 'P6M', 'P1Y', 'P2Y', 'P5Y']);
    assert.equal(await operations.inputValue(), 'P1M');
    await panel.getByRole('status').filter({ hasText: 'Nobody has changed these settings: the defaults hold.' }).waitFor();
    assert.equal(await save.isDisabled(), true, 'nothing to save until a value moves');

    await retention.selectOption({ label: 'Two years' });
    await operations.fill('P2W');
    const [sent] = await Promise.all([
      c.page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/settings/audit')),
      save.click(),
    ]);
    assert.deepEqual(sent.postDataJSON(), { retention: 'P2Y', operationRetention: 'P2W' }, 'only the moved fields are sent');
    const stored = await until(async () => {
      const s = await settings();
      return s.retention === 'P2Y' && s.operationRetention === 'P2W' ? s : undefined;
    }, 'the new retentions on the API');
    assert.deepEqual(stored.push, first.push, 'the push left out keeps its value');
    assert.equal(stored.updatedBy, 'account:root');
    await panel.getByRole('status').filter({ hasText: `Last changed by account:root on ${inParis(stored.updatedAt)}.` }).waitFor();
    await until(async () => ((await save.isDisabled()) ? true : undefined), 'the form at rest on what was stored');

    await c.page.reload();
    const again = panelOf(c);
    await until(async () => ((await again.getByLabel('Retention of changes and security lines').inputValue()) === 'P2Y' ? true : undefined), 'the retention after a reload');
    assert.equal(await again.getByLabel('Retention of audited operations').inputValue(), 'P2W');
    await c.screenshot('audit-settings');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('a value the gateway refuses shows its sentence and changes nothing', async () => {
  const before = await settings();
  const tooLong = await root.put('/api/settings/audit', { operationRetention: 'P2Y' });
  assert.equal(tooLong.status, 400, tooLong.text);
  assert.equal(tooLong.json.field, 'operationRetention');
  const noCollector = await root.put('/api/settings/audit', { push: { audit: true } });
  assert.equal(noCollector.status, 409, noCollector.text);
  assert.equal(noCollector.json.code, 'audit.no-collector');
  assert.deepEqual(chosen(await settings()), chosen(before), 'the refused calls changed nothing');

  const c = await openAudit();
  try {
    const panel = panelOf(c);
    const operations = panel.getByLabel('Retention of audited operations');
    const save = panel.getByRole('button', { name: 'Save' });
    await until(async () => ((await operations.inputValue()) === before.operationRetention ? true : undefined), 'the settings in the panel');

    await operations.fill('P2Y');
    await save.click();
    await panel.getByRole('alert').filter({ hasText: tooLong.json.detail }).waitFor();
    assert.equal(await panel.getByRole('alert').textContent(), tooLong.json.detail);

    await operations.fill(before.operationRetention);
    await panel.getByLabel(/^The data plane's lines/).check();
    await save.click();
    await panel.getByRole('alert').filter({ hasText: noCollector.json.detail }).waitFor();
    assert.equal(await panel.getByRole('alert').textContent(), noCollector.json.detail);
    assert.deepEqual(chosen(await settings()), chosen(before), 'nothing changed on the gateway');

    await c.page.reload();
    const again = panelOf(c);
    await until(async () => ((await again.getByLabel('Retention of audited operations').inputValue()) === before.operationRetention ? true : undefined), 'the retention in force after a reload');
    assert.equal(await again.getByLabel(/^The data plane's lines/).isChecked(), false);
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('the last sweep, with the lines it removed, and the drops read as the API states them', async () => {
  assert.equal((await settings()).lastSweep, null);
  const c = await openAudit();
  try {
    const values = panelOf(c).getByRole('definition');
    await panelOf(c).getByRole('term').first().waitFor();
    assert.deepEqual(await panelOf(c).getByRole('term').allInnerTexts(), [
      'Last sweep', 'Data plane lines dropped since start (full queue)', 'Console lines dropped since start (full queue)',
    ]);
    assert.equal(await values.first().innerText(), 'No sweep yet');

    // The recorder sweeps an hour after it started, on the gateway's clock.
    await advanceClock(control, 'PT1H');
    const s = await until(async () => {
      const now = await settings();
      return now.lastSweep ? now : undefined;
    }, 'the hourly sweep');
    const { changes, security, operations } = s.lastSweep.removed;
    const total = changes + security + operations;
    await c.page.reload();
    await panelOf(c).getByRole('term').first().waitFor();
    assert.deepEqual(await panelOf(c).getByRole('definition').allInnerTexts(), [
      `${inParis(s.lastSweep.at)}: ${total} line${total === 1 ? '' : 's'} removed (changes ${changes}, security ${security}, operations ${operations})`,
      String(s.dropped.audit),
      String(s.dropped.console),
    ]);
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('the other readers of the trail, refused these settings by the API, see the trail without the panel', async () => {
  await account('apps', ['app-admin']);
  await account('infra', ['infra-admin']);
  for (const name of ['apps', 'infra']) {
    const reader = await signInAdmin(control, name, `${name}-password-1`);
    assert.equal((await reader.get('/api/audit')).status, 200, `${name} reads the trail`);
    const said = await reader.get('/api/settings/audit');
    assert.equal(said.status, 403, `${name} is refused the settings`);
    assert.equal(said.json.code, 'capability');

    const c = await openAudit(name, `${name}-password-1`);
    try {
      await c.page.getByRole('table', { name: 'Audit events' }).waitFor();
      await c.page.getByRole('status').filter({ hasText: /events? shown/ }).waitFor();
      assert.equal(await c.page.getByRole('region', { name: 'Settings' }).count(), 0);
      assert.equal(await c.page.getByRole('button', { name: 'Save' }).count(), 0);
      assert.equal(await c.page.getByRole('alert').count(), 0, 'no refusal on the screen');
      c.expectClean();
    } finally {
      await c.context.close();
    }
  }
});
