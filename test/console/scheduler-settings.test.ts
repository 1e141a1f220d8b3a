/**
 * The scheduler's settings in a real browser (spec 1.1 rules 21 and 36; CONTRACT.md "Console"):
 * root changes the history retention and the schedules per token on the Scheduler screen and the
 * API reads them back; a value the gateway refuses shows its sentence and changes nothing; an
 * application administrator reads them without a way to change them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Locator } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { inParis, launchBrowser, openScreen, type ConsolePage } from '../helpers/browser.ts';
import { until } from '../helpers/until.ts';

let t: TestGateway;
let root: Admin;
let control: string;
let browser: Browser;

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

async function settings(admin: Admin = root): Promise<any> {
  const a = await admin.get('/api/settings/schedules');
  assert.equal(a.status, 200, a.text);
  return a.json;
}

const openScheduler = (name = 'root', password?: string): Promise<ConsolePage> => openScreen(browser, control, '/scheduler', 'Scheduler', name, password);

const panelOf = (c: ConsolePage): Locator => c.page.getByRole('region', { name: 'Settings' });

test('root changes the history retention and the schedules per token on the page; the API reads them and the page shows them after a reload', async () => {
  assert.deepEqual(await settings(), { retention: 'P30D', maxSchedules: 10000, updatedAt: null, updatedBy: null });
  const c = await openScheduler();
  try {
    const panel = panelOf(c);
    await panel.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    assert.equal(await c.page.getByRole('heading', { level: 1 }).count(), 1, 'the panel adds no second <h1>');
    const retention = panel.getByLabel('History retention');
    const perToken = panel.getByLabel('Schedules per token');
    const save = panel.getByRole('button', { name: 'Save' });
    assert.equal(await retention.inputValue(), 'P30D');
    assert.equal(await perToken.inputValue(), '10000');
    await panel.getByRole('status').filter({ hasText: 'Nobody has changed these settings: the defaults hold.' }).waitFor();
    assert.equal(await save.isDisabled(), true, 'nothing to save until a value moves');

    // Weeks are taken and stored as days: the input follows what the gateway stored.
    await retention.fill('P2W');
    await perToken.fill('250');
    await save.click();
    const stored = await until(async () => {
      const s = await settings();
      return s.retention === 'P14D' && s.maxSchedules === 250 ? s : undefined;
    }, 'the new settings on the API');
    assert.equal(stored.updatedBy, 'account:root');
    await until(async () => ((await retention.inputValue()) === 'P14D' ? true : undefined), 'the stored retention in the input');
    await panel.getByRole('status').filter({ hasText: `Last changed by account:root on ${inParis(stored.updatedAt)}.` }).waitFor();

    // A single field moved: only that field is sent, the other keeps whatever the gateway holds.
    await perToken.fill('300');
    const [sent] = await Promise.all([
      c.page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith('/api/settings/schedules')),
      save.click(),
    ]);
    assert.deepEqual(sent.postDataJSON(), { maxSchedules: 300 });
    await until(async () => ((await settings()).maxSchedules === 300 ? true : undefined), 'the per-token maximum on the API');
    assert.equal((await settings()).retention, 'P14D');

    await c.page.reload();
    await panelOf(c).getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    await until(async () => ((await panelOf(c).getByLabel('History retention').inputValue()) === 'P14D' ? true : undefined), 'the retention after a reload');
    assert.equal(await panelOf(c).getByLabel('Schedules per token').inputValue(), '300');
    await c.screenshot('scheduler-settings');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('a value the gateway refuses shows its sentence and changes nothing', async () => {
  const before = await settings();
  const zero = await root.put('/api/settings/schedules', { maxSchedules: 0 });
  const months = await root.put('/api/settings/schedules', { retention: 'P1M' });
  for (const refused of [zero, months]) {
    assert.equal(refused.status, 400, refused.text);
    assert.ok(refused.json.detail, 'the refusal carries its sentence');
  }
  assert.equal(zero.json.field, 'maxSchedules');
  assert.equal(months.json.field, 'retention');
  assert.deepEqual(await settings(), before, 'the refused calls changed nothing');

  const c = await openScheduler();
  try {
    const panel = panelOf(c);
    const retention = panel.getByLabel('History retention');
    const perToken = panel.getByLabel('Schedules per token');
    const save = panel.getByRole('button', { name: 'Save' });
    await until(async () => ((await retention.inputValue()) === before.retention ? true : undefined), 'the settings in the panel');

    await perToken.fill('0');
    await save.click();
    await panel.getByRole('alert').filter({ hasText: zero.json.detail }).waitFor();
    assert.equal(await panel.getByRole('alert').textContent(), zero.json.detail);

    await perToken.fill(String(before.maxSchedules));
    await retention.fill('P1M');
    await save.click();
    await panel.getByRole('alert').filter({ hasText: months.json.detail }).waitFor();
    assert.equal(await panel.getByRole('alert').textContent(), months.json.detail);
    assert.deepEqual(await settings(), before, 'nothing changed on the gateway');

    await c.page.reload();
    await until(async () => ((await panelOf(c).getByLabel('History retention').inputValue()) === before.retention ? true : undefined), 'the retention in force after a reload');
    assert.equal(await panelOf(c).getByLabel('Schedules per token').inputValue(), String(before.maxSchedules));
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('an application administrator reads the settings, with nothing to change them', async () => {
  assert.equal((await root.post('/api/accounts', { name: 'apps', password: 'apps-password-1', capabilities: ['app-admin'] })).status, 201);
  const apps = await signInAdmin(control, 'apps', 'apps-password-1');
  const held = await settings(apps);
  const refused = await apps.put('/api/settings/schedules', { maxSchedules: 5 });
  assert.equal(refused.status, 403, 'root alone changes them');

  const c = await openScheduler('apps', 'apps-password-1');
  try {
    const panel = panelOf(c);
    await panel.getByRole('heading', { level: 2, name: 'Settings' }).waitFor();
    const values = panel.getByRole('definition');
    await values.first().waitFor();
    const days = Number(/^P(\d+)D$/.exec(held.retention)![1]);
    assert.deepEqual(await values.allInnerTexts(), [`${held.retention} (${days} days)`, held.maxSchedules.toLocaleString('en-GB')]);
    assert.deepEqual(await panel.getByRole('term').allInnerTexts(), ['History retention', 'Schedules per token']);
    await panel.getByText('Root alone changes these settings.').waitFor();
    await panel.getByRole('status').filter({ hasText: `Last changed by account:root on ${inParis(held.updatedAt)}.` }).waitFor();
    assert.equal(await panel.getByRole('button').count(), 0, 'no Save for an application administrator');
    assert.equal(await panel.getByRole('textbox').count(), 0);
    assert.equal(await panel.getByRole('spinbutton').count(), 0);
    c.expectClean();
  } finally {
    await c.context.close();
  }
});
