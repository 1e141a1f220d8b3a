/**
 * The Logs screen in a real browser (spec 1.4 rules 3-5; CONTRACT.md "Logs", "Live feeds"): the
 * node's buffer and each new line live, the level and text filters, the export of exactly the
 * shown lines, the level set from the page with its 30-minute countdown on the gateway's clock,
 * the access log switch and the output mode, the refusal an application administrator reads, and
 * on PostgreSQL a level set on one node's page reaching another node's page.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestDatabase, TEST_DATABASE, type TestDatabase } from '../helpers/db.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { expectRefusedScreen, launchBrowser, openConsole, signInThroughPage, tableReader, type ConsolePage } from '../helpers/browser.ts';
import { until } from '../helpers/until.ts';

/** Both nodes start at info on the test clock, so debug is more talkative and its 30 minutes can be walked. */
const ENV = { GATEWAY_CLOCK: 'manual', GATEWAY_LOG_LEVEL: 'info' };

let db: TestDatabase;
let t: TestGateway;
let root: Admin;
let control: string;
let browser: Browser;

before(async () => {
  // The database is the test's, so that a second node can share it (PostgreSQL only).
  db = await createTestDatabase();
  t = await startTestGateway({ ...ENV, GATEWAY_NODE_NAME: 'node-a' }, db);
  control = t.url('control');
  root = await signInAdmin(control);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await db?.drop();
});

const COLUMNS = ['time', 'level', 'message', 'attrs', 'node'] as const;
const LINES = tableReader('Log lines', COLUMNS);
const rowsWhen = (page: Page, pred: (r: Awaited<ReturnType<typeof LINES.read>>) => boolean, what: string) =>
  LINES.when(page, pred, what, (r) => r.slice(0, 8).map((x) => [x.level, x.message]));

/** A line's time as the operator in Paris reads it (the browser context's zone and locale). */
const inParis = (iso: string) => new Date(iso).toLocaleString('en-GB', {
  timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3,
});

async function settings(admin: Admin): Promise<any> {
  const a = await admin.get('/api/settings/logs');
  assert.equal(a.status, 200, a.text);
  return a.json;
}

async function logsPage(base: string): Promise<ConsolePage> {
  const c = await openConsole(browser, base);
  await signInThroughPage(c, 'root', undefined, '/logs');
  await c.page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
  await c.page.getByRole('status', { name: 'Live feed' }).filter({ hasText: 'Live' }).waitFor();
  return c;
}

const advance = (by: string) => call(`${control}/__clock/advance`, { method: 'POST', body: { by }, headers: root.headers });

test('the live buffer, a new line live, the level and text filters, and the export of exactly the shown lines', async () => {
  const marker = randomBytes(5).toString('hex');
  const log = t.gw.ctx.log;
  log.info(`buffered-${marker}`, { route: 'orders' });
  log.warn(`slow-${marker}`, { upstream: 'http://127.0.0.1:9' });
  log.error(`down-${marker}`, { code: 'ECONNREFUSED', attempts: 3 });
  log.debug(`below-the-level-${marker}`);

  const c = await logsPage(control);
  try {
    const buffered = await rowsWhen(c.page, (r) => r.some((x) => x.message === `buffered-${marker}`), 'the buffer from hello');
    const [line] = (await root.get(`/api/logs?q=buffered-${marker}`)).json.lines;
    assert.deepEqual(buffered.find((x) => x.message === `buffered-${marker}`), {
      time: inParis(line.time), level: 'info', message: `buffered-${marker}`, attrs: 'route=orders', node: 'node-a',
    });
    assert.ok(!buffered.some((x) => x.message.startsWith('below-the-level')), 'a debug line at info is not in the buffer');
    assert.ok(buffered.some((x) => x.message === 'listening' && x.attrs.includes('plane=control')), 'the boot lines are there');

    // New lines arrive live, newest on top: one the gateway writes when a setting moves, one of ours.
    assert.equal((await root.put('/api/settings/logs', { accessLog: true })).status, 200);
    await rowsWhen(c.page, (r) => r[0]?.message === 'access log switched on', 'the access log line, live');
    log.warn(`live-${marker}`, { node: 'node-a', phase: { step: 2 } });
    const live = await rowsWhen(c.page, (r) => r[0]?.message === `live-${marker}`, 'our line, live');
    assert.equal(live[0]!.attrs, 'node=node-a\nphase={"step":2}');

    await c.page.getByLabel('Show level').selectOption('warn');
    const warn = await rowsWhen(c.page, (r) => r.every((x) => x.level === 'warn' || x.level === 'error') && r.some((x) => x.message === `down-${marker}`), 'warn and above');
    assert.ok(!warn.some((x) => x.message === `buffered-${marker}`));
    await c.page.getByLabel('Search').fill(marker.toUpperCase());
    const found = await rowsWhen(c.page, (r) => r.length === 3, 'our three lines at warn and above');
    assert.deepEqual(found.map((x) => [x.level, x.message]), [['warn', `live-${marker}`], ['error', `down-${marker}`], ['warn', `slow-${marker}`]]);
    assert.match(await c.page.getByRole('status', { name: 'Lines shown' }).innerText(), /^3 of \d+ lines shown$/);

    const [file] = await Promise.all([c.page.waitForEvent('download'), c.page.getByRole('button', { name: 'Export shown lines (.jsonl)' }).click()]);
    assert.match(file.suggestedFilename(), /^meerkat-logs-node-a-.+\.jsonl$/);
    const text = readFileSync((await file.path())!, 'utf8');
    assert.ok(text.endsWith('\n'));
    const exported = text.trimEnd().split('\n').map((l) => JSON.parse(l));
    // Exactly what is shown, oldest first as a log file reads, and the same records the API selects.
    const api = (await root.get(`/api/logs?level=warn&q=${marker}`)).json.lines;
    assert.deepEqual(exported, api);
    assert.deepEqual(exported.map((l: any) => l.message), [`slow-${marker}`, `down-${marker}`, `live-${marker}`]);
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('the level set in the page applies with its 30-minute countdown on the gateway\'s clock, and returns to the startup level on time', async () => {
  // The gateway's clock is put 10 minutes ahead of the browser's: a countdown read on the
  // browser's clock would say 40 minutes.
  assert.equal((await advance('PT10M')).status, 200);
  const c = await logsPage(control);
  try {
    const select = c.page.getByLabel('Level on every node');
    const countdown = c.page.getByRole('status', { name: 'Level countdown' });
    assert.equal(await select.inputValue(), 'info');
    await c.page.getByText('Startup level: info').waitFor();
    assert.equal(await countdown.innerText(), 'kept until changed or a restart');

    await select.selectOption('debug');
    await countdown.filter({ hasText: /^returns to info in (30 min|29 min \d+ s)$/ }).waitFor();
    const s = await settings(root);
    assert.equal(s.level, 'debug');
    const gatewayNow = (await call(`${control}/__clock`, { headers: root.headers })).json.now as number;
    assert.ok(Math.abs(s.revertsAt * 1000 - (gatewayNow + 30 * 60_000)) <= 1000, 'the API says 30 minutes from the gateway\'s now');
    await rowsWhen(c.page, (r) => r[0]?.message === 'operational log level set' && r[0].attrs.includes('to=debug') && r[0].attrs.includes('by=account:root'), 'the line saying who set it');
    // The level is in force at once: a debug line now reaches the page.
    t.gw.ctx.log.debug('debugging-now', { detail: 'visible at debug' });
    await rowsWhen(c.page, (r) => r[0]?.message === 'debugging-now' && r[0].level === 'debug', 'a debug line, live');
    await c.screenshot('logs');

    assert.equal((await advance('PT29M')).status, 200);
    assert.equal(await select.inputValue(), 'debug', 'not a minute early');
    assert.equal((await advance('PT1M')).status, 200);
    await countdown.filter({ hasText: 'kept until changed or a restart' }).waitFor();
    assert.equal(await select.inputValue(), 'info');
    assert.equal((await settings(root)).level, 'info');
    await rowsWhen(c.page, (r) => r[0]?.message === 'the operational log level returned to its startup level', 'the line saying it returned');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('the access log switch and the output mode apply on the gateway; a mode of the licensed edition reads its refusal', async () => {
  const before = await settings(root);
  assert.equal(before.accessLog, true, 'switched on by the first test');
  const c = await logsPage(control);
  try {
    const box = c.page.getByLabel('Access log (one line per request on standard output, every node)');
    assert.equal(await box.isChecked(), true);
    await box.uncheck();
    await until(async () => ((await settings(root)).accessLog === false ? true : undefined), 'the access log off');
    await rowsWhen(c.page, (r) => r[0]?.message === 'access log switched off', 'the gateway says it');

    const mode = c.page.getByLabel('Output mode');
    assert.equal(await mode.inputValue(), 'startup');
    await mode.selectOption('agent');
    await until(async () => ((await settings(root)).mode === 'agent' ? true : undefined), 'the agent mode');

    const refused = await root.put('/api/settings/logs', { mode: 'otlp' });
    assert.equal(refused.status, 403);
    await mode.selectOption('otlp');
    await c.page.getByRole('alert').filter({ hasText: refused.json.detail }).waitFor();
    assert.equal(await mode.inputValue(), 'agent', 'the select shows the mode in force, not the refused one');
    assert.equal((await settings(root)).mode, 'agent');
    await mode.selectOption('startup');
    await until(async () => ((await settings(root)).mode === 'startup' ? true : undefined), 'back to the startup format');

    const dropped = c.page.getByRole('definition').first();
    assert.equal(await dropped.innerText(), String(before.dropped));
    await c.page.getByText('Collector batches dropped (refused three times)').waitFor();
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('an application administrator opening /logs reads the API\'s refusal', async () => {
  assert.equal((await root.post('/api/accounts', { name: 'apps', password: 'apps-password-1', capabilities: ['app-admin'] })).status, 201);
  const said = await (await signInAdmin(control, 'apps', 'apps-password-1')).get('/api/settings/logs');
  assert.equal(said.status, 403);
  assert.equal(said.json.code, 'capability');
  await expectRefusedScreen(browser, control, {
    name: 'apps', password: 'apps-password-1', path: '/logs', heading: 'Logs', detail: said.json.detail,
    absent: (page) => page.getByRole('table'),
    viewport: { width: 390, height: 844 },
  });
});

test('a level set in node A\'s page reaches node B\'s page', { skip: TEST_DATABASE !== 'postgres' && 'needs two nodes on one PostgreSQL database' }, async () => {
  const b = await startTestGateway({ ...ENV, GATEWAY_NODE_NAME: 'node-b' }, db);
  try {
    // A node follows only a level set after it started: A's test clock is brought up to B's.
    const behind = b.gw.ctx.clock.now() - t.gw.ctx.clock.now();
    if (behind > 0) await t.gw.ctx.advanceClock!(behind);
    const pageA = await logsPage(control);
    const pageB = await logsPage(b.url('control'));
    try {
      await pageB.page.getByRole('status', { name: 'Live feed' }).filter({ hasText: 'node node-b' }).waitFor();
      const selectB = pageB.page.getByLabel('Level on every node');
      assert.notEqual(await selectB.inputValue(), 'warn');
      await pageA.page.getByLabel('Level on every node').selectOption('warn');
      await until(async () => ((await selectB.inputValue()) === 'warn' ? true : undefined), 'warn on node B\'s page');
      await pageB.page.getByText('Startup level: info').waitFor();
      assert.equal(await pageB.page.getByRole('status', { name: 'Level countdown' }).innerText(), 'kept until changed or a restart');
      await rowsWhen(pageB.page, (r) => r.some((x) => x.message === 'operational log level set' && x.attrs.includes('to=warn') && x.node === 'node-b'), 'node B says it');
      pageA.expectClean();
      pageB.expectClean();
    } finally {
      await pageA.context.close();
      await pageB.context.close();
    }
  } finally {
    await b.close();
  }
});
