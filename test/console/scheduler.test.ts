/**
 * The scheduler screen in a real browser (spec 1.1 rule 37): schedules made by a backend on the
 * internal plane, shown and acted on by an operator on the console, kept current by the live
 * feed; turns made to happen on the gateway's test clock.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Browser, Locator, Page } from 'playwright-core';
import type { TestGateway } from '../helpers/gateway.ts';
import { putOk, type Admin } from '../helpers/admin.ts';
import { call, signIn } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import type { Upstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';
import { expectRefusedScreen, launchBrowser, openConsole, signInThroughPage, type ConsolePage } from '../helpers/browser.ts';

let t: TestGateway;
let up: Upstream;
let root: Admin;
let token: string;
let browser: Browser;
let control: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  control = t.url('control');
  await putOk(root, '/api/roles/jobs', {});
  await putOk(root, '/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  await putOk(root, '/api/routes/ledger', { upstream: `${up.origin}/svc`, paths: ['/ledger'], rule: { roles: ['jobs'] } });
  await putOk(root, '/api/organisations/acme', { name: 'Acme' });
  await putOk(root, '/api/organisations/globex', { name: 'Globex' });
  token = await schedulesToken(root, 'ops-svc', ['*'], ['jobs'], ['acme', 'globex']);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await up?.close();
});

type Json = Record<string, any>;

const callInternal = internalWith(() => t.url('internal'), () => token);
async function internal(method: string, path: string, body?: unknown): Promise<Json> {
  const a = await callInternal(method, path, body);
  assert.ok(a.status < 300, `${method} ${path}: ${a.status} ${a.text}`);
  return a.json;
}
const create = (fields: Json): Promise<Json> =>
  internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/close', every: 'PT1H', roles: ['jobs'], ...fields });
const advance = (by: string) => advanceClock(control, by);
const schedule = async (id: string): Promise<Json> => (await root.get(`/api/schedules/${id}`)).json;

/** Waits on the API (real I/O) until the schedule's last run is not `previous`. */
async function nextRun(id: string, previous: string | null = null): Promise<Json> {
  return until(async () => {
    const s = await schedule(id);
    return s.lastRun && s.lastRun.id !== previous && !s.inFlight ? s.lastRun : undefined;
  }, `a new run of ${id}`);
}

/** The schedules table's row naming `name`. */
function row(page: Page, name: string): Locator {
  return page.getByRole('table', { name: 'Schedules' }).getByRole('row').filter({ hasText: name });
}

/** An assertion on the page that holds within a few seconds (the feed travels on its own time). */
async function eventually(what: string, check: () => Promise<void>): Promise<void> {
  let last: unknown;
  await until(async () => {
    try {
      await check();
      return true;
    } catch (err) {
      last = err;
      return undefined;
    }
  }, `${what}: ${last instanceof Error ? last.message : String(last)}`, 10_000, 50);
}

async function openScheduler(viewport?: { width: number; height: number }): Promise<ConsolePage> {
  const c = await openConsole(browser, control, viewport);
  await signInThroughPage(c, 'root', undefined, '/scheduler');
  await c.page.getByRole('heading', { level: 1, name: 'Scheduler' }).waitFor();
  await c.page.getByText(/^Live from /).waitFor();
  return c;
}

/** As the browser shows an epoch: the operator's zone (the test browser's is Europe/Paris), or UTC. */
function shownTime(epochS: number, utc: boolean): string {
  const d = new Date(epochS * 1000);
  if (utc) return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
  return d.toLocaleString('en-GB', { timeZone: 'Europe/Paris', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** An upstream that holds the calls to `/slow` until the test answers them. */
function holdingUpstream(): { held: Array<(status: number, text?: string) => void>; restore: () => void } {
  const held: Array<(status: number, text?: string) => void> = [];
  up.handle((req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.includes('/slow')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    held.push((status, text = '') => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(text);
    });
  });
  return { held, restore: () => up.handle(undefined) };
}

test('schedules are listed with their service, organisation, cadence, state and next turn; filters, the zone toggle and live changes', async () => {
  up.handle(undefined);
  const now = (await call(`${control}/__clock`)).json.now as number;
  const nightly = await create({ name: 'nightly-close', organisation: 'acme', metadata: { team: 'billing', env: 'prod-eu' } });
  const ledger = await create({ name: 'ledger-sync', routeId: 'ledger', path: '/ledger/sync', every: undefined, cron: '0 3 * * *', timezone: 'Europe/Paris', organisation: 'globex', metadata: { team: 'ledger', env: 'staging' } });
  const reminder = await create({ name: 'renewal-reminder', organisation: 'acme', every: undefined, at: new Date(now + 90_000).toISOString().replace(/\.\d+Z$/, 'Z') });

  const c = await openScheduler();
  const { page } = c;
  try {
    // Each row: name, service, organisation's name, cadence, state, next turn in the operator's zone.
    const n = row(page, 'nightly-close');
    await n.waitFor();
    const cells = await n.getByRole('cell').allInnerTexts();
    assert.match(cells[0]!, /nightly-close/);
    assert.match(cells[0]!, new RegExp(nightly.id));
    assert.match(cells[0]!, /team=billing/);
    assert.match(cells[1]!, /^billing\s+POST \/billing\/close$/);
    assert.equal(cells[2], 'Acme');
    assert.equal(cells[3], 'every 1 h');
    assert.equal(cells[4], 'active');
    assert.match(cells[5]!, new RegExp(`^${shownTime(nightly.nextRunAt, false).replace(/[/]/g, '\\/')}`));
    assert.match(cells[5]!, /in 59 min|in 1 h/, 'the countdown is read on the gateway\'s clock');
    assert.match(cells[6]!, /never ran/);
    const l = await row(page, 'ledger-sync').getByRole('cell').allInnerTexts();
    assert.equal(l[2], 'Globex');
    assert.equal(l[3], 'cron 0 3 * * * (Europe/Paris)');

    // Hours in UTC: a toggle the browser remembers.
    await page.getByLabel('Hours in UTC').check();
    await n.getByText(shownTime(nightly.nextRunAt, true)).waitFor();
    await page.reload();
    await page.getByText(/^Live from /).waitFor();
    assert.equal(await page.getByLabel('Hours in UTC').isChecked(), true);
    await n.getByText(shownTime(nightly.nextRunAt, true)).waitFor();
    await page.getByLabel('Hours in UTC').uncheck();
    await n.getByText(shownTime(nightly.nextRunAt, false)).waitFor();

    // Pause from the page: the row changes through the feed, and its button becomes Resume.
    await n.getByRole('button', { name: 'Pause' }).click();
    await n.getByRole('button', { name: 'Resume' }).waitFor();
    await n.getByText('paused', { exact: true }).waitFor();
    await n.getByText('none while paused').waitFor();
    assert.equal((await schedule(nightly.id)).paused, true);

    // Changes made elsewhere (root's API, the backend's PUT) reach the row without a reload.
    assert.equal((await root.post(`/api/schedules/${nightly.id}/resume`, undefined)).status, 200);
    await n.getByRole('button', { name: 'Pause' }).waitFor();
    await n.getByText('active', { exact: true }).waitFor();
    await internal('PUT', `/api/schedules/${nightly.id}`, { name: 'nightly-close', routeId: 'billing', path: '/billing/close', every: 'PT30M', roles: ['jobs'], organisation: 'acme', metadata: { team: 'billing', env: 'prod-eu' } });
    await n.getByText('every 30 min').waitFor();
    const late = await create({ name: 'late-arrival', organisation: 'globex' });
    await row(page, 'late-arrival').waitFor();

    // The screen's organisation filter, and the shell's switch, which the screen follows.
    const filters = page.getByRole('group', { name: 'Filters' });
    const names = async () => (await page.getByRole('table', { name: 'Schedules' }).getByRole('row').allInnerTexts()).slice(1).map((r) => r.split(/\s/)[0]).sort();
    await filters.getByLabel('Organisation').selectOption({ label: 'Acme' });
    await eventually('acme only', async () => assert.deepEqual(await names(), ['nightly-close', 'renewal-reminder']));
    await filters.getByLabel('Service (route)').selectOption('ledger');
    await page.getByText('No schedule matches these filters.').waitFor();
    await page.getByRole('banner').getByLabel('Organisation').selectOption({ label: 'Globex' });
    await eventually('the screen follows the shell', async () => assert.equal(await filters.getByLabel('Organisation').inputValue(), 'globex'));
    await eventually('globex ledger', async () => assert.deepEqual(await names(), ['ledger-sync']));
    await filters.getByLabel('Service (route)').selectOption({ label: 'All' });
    await eventually('globex', async () => assert.deepEqual(await names(), ['late-arrival', 'ledger-sync']));
    // A schedule that leaves the filter leaves the screen, live.
    await internal('DELETE', `/api/schedules/${late.id}`);
    await eventually('late-arrival deleted', async () => assert.deepEqual(await names(), ['ledger-sync']));
    await page.getByRole('banner').getByLabel('Organisation').selectOption({ label: 'All' });
    await eventually('all', async () => assert.deepEqual(await names(), ['ledger-sync', 'nightly-close', 'renewal-reminder']));

    // Metadata: key=value, key=~expression; a bad expression gets the gateway's own sentence.
    const meta = filters.getByLabel('Metadata');
    await meta.fill('team=billing');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await eventually('team=billing', async () => assert.deepEqual(await names(), ['nightly-close']));
    await meta.fill('env=~^(prod|staging)-?');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await eventually('env regex', async () => assert.deepEqual(await names(), ['ledger-sync', 'nightly-close']));
    for (const bad of ['(a+)+$', '(unclosed']) {
      const refusal = await root.get(`/api/schedules?meta.env=${encodeURIComponent(`~${bad}`)}`);
      assert.equal(refusal.json.code, 'filter.regex-invalid');
      await meta.fill(`env=~${bad}`);
      await filters.getByRole('button', { name: 'Filter' }).click();
      // The line of the previous refusal is there already: wait for this one's sentence.
      await eventually('the refusal', async () => assert.equal(await page.getByRole('alert').textContent(), refusal.json.detail));
      // Refused, never an empty list: the last accepted filter still holds.
      assert.deepEqual(await names(), ['ledger-sync', 'nightly-close']);
    }
    await meta.fill('');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').waitFor({ state: 'detached' });
    await eventually('no metadata filter', async () => assert.deepEqual(await names(), ['ledger-sync', 'nightly-close', 'renewal-reminder']));

    // The delayed action goes out and is finished; the switch hides it.
    await advance('PT2M');
    const r = row(page, 'renewal-reminder');
    await r.getByText('finished', { exact: true }).waitFor();
    await r.getByText('done 200').waitFor();
    await page.getByLabel('Hide finished delayed actions').check();
    await r.waitFor({ state: 'detached' });
    await page.getByText('2 schedules shown, 1 finished delayed action hidden.').waitFor();
    await page.getByLabel('Hide finished delayed actions').uncheck();
    await r.waitFor();
    c.expectClean();
  } finally {
    await c.context.close();
    for (const s of [nightly, ledger, reminder]) await internal('DELETE', `/api/schedules/${s.id}`);
  }
});

test('run now shows the run in flight, then its outcome; a refusal shows the gateway\'s sentence; attempts, reports, replay and delete', async () => {
  const hold = holdingUpstream();
  const s = await create({ name: 'slow-close', path: '/billing/slow' });
  const c = await openScheduler();
  const { page } = c;
  try {
    const r = row(page, 'slow-close');
    await r.getByRole('button', { name: 'Run now' }).click();
    await r.getByText('waiting for the answer').waitFor();
    await r.getByText('after this run').waitFor();

    // Run now while the run is in flight: the 409 and its sentence, in the row.
    await r.getByRole('button', { name: 'Run now' }).click();
    const refusal = r.getByRole('alert');
    await refusal.waitFor();
    assert.match(String(await refusal.textContent()), /^Run run_[0-9a-f]+ of this schedule is in flight; run now and replay wait until it has finished\.$/);

    await until(() => hold.held[0], 'the held call');
    hold.held[0]!(200, 'closed');
    await r.getByText('done 200').waitFor();
    await r.getByText('after this run').waitFor({ state: 'detached' });

    // A retried attempt: its number while in flight and on the outcome.
    await r.getByRole('button', { name: 'Run now' }).click();
    await r.getByRole('alert').waitFor({ state: 'detached' });
    await until(() => hold.held[1], 'attempt 1');
    hold.held[1]!(503, 'busy');
    await r.getByText(/attempt 1 failed \(503\)/).waitFor();
    await r.getByText(/^attempt 2 at/).waitFor();
    await advance('PT10S');
    await r.getByText('waiting for the answer (attempt 2)').waitFor();
    await until(() => hold.held[2], 'attempt 2');
    hold.held[2]!(200, 'closed');
    await r.getByText(/attempt 2$/).waitFor();
    assert.equal((await schedule(s.id)).lastRun.attempt, 2);

    // A failed run: its sentence in the row; Replay sends the turn again.
    const before = (await schedule(s.id)).lastRun.id;
    await r.getByRole('button', { name: 'Run now' }).click();
    await until(() => hold.held[3], 'the failing call');
    hold.held[3]!(500, 'The ledger is locked for the month-end close.');
    const failed = await nextRun(s.id, before);
    assert.equal(failed.state, 'failed');
    assert.match(failed.detail, /The ledger is locked for the month-end close\./);
    await r.getByText('failed 500').waitFor();
    await r.getByText(failed.detail, { exact: true }).waitFor();
    await r.getByRole('button', { name: 'Replay' }).click();
    await until(() => hold.held[4], 'the replay');
    hold.held[4]!(200, 'closed');
    const replayed = await nextRun(s.id, failed.id);
    assert.equal(replayed.cause, 'replay');
    assert.equal(replayed.ofRun, failed.id);
    await r.getByText('done 200').waitFor();

    // A service that accepts (202) and reports: accepted, its progress, then its outcome.
    up.handle((_req, res) => { res.writeHead(202); res.end(); });
    await r.getByRole('button', { name: 'Run now' }).click();
    await r.getByText('accepted', { exact: true }).waitFor();
    const inFlight = (await schedule(s.id)).inFlight;
    await internal('PATCH', `/api/schedules/${s.id}/run`, { run: inFlight.runId, state: 'running', progress: 40, detail: 'half-way' });
    await r.getByText('accepted, 40%').waitFor();
    await r.getByText('half-way').waitFor();
    await internal('PATCH', `/api/schedules/${s.id}/run`, { run: inFlight.runId, state: 'done', detail: '1200 rows' });
    await r.getByText('1200 rows').waitFor();
    await r.getByText('after this run').waitFor({ state: 'detached' });

    // Delete asks on the page first; Cancel keeps the schedule.
    await r.getByRole('button', { name: 'Delete' }).click();
    const confirm = r.getByRole('group', { name: 'Delete slow-close?' });
    await confirm.getByText('Delete slow-close and its history?').waitFor();
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await r.getByRole('button', { name: 'Delete' }).click();
    assert.equal((await root.get(`/api/schedules/${s.id}`)).status, 200, 'nothing deleted before the confirmation');
    await r.getByRole('button', { name: 'Yes, delete' }).click();
    await r.waitFor({ state: 'detached' });
    assert.equal((await root.get(`/api/schedules/${s.id}`)).status, 404);
    c.expectClean();
  } finally {
    hold.restore();
    await c.context.close();
    await callInternal('DELETE', `/api/schedules/${s.id}`);
  }
});

test('a schedule\'s run history pages with More, shows each failed run\'s sentence, and takes new turns live', async () => {
  let turn = 0;
  up.handle((_req, res) => {
    turn += 1;
    if (turn % 4 === 2) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`Turn ${turn} found the ledger locked.`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  const s = await create({ name: 'minutely-sync', every: 'PT1M', organisation: 'acme', metadata: { team: 'billing' } });
  let last: string | null = null;
  for (let i = 0; i < 12; i++) {
    await advance('PT1M');
    last = (await nextRun(s.id, last)).id;
  }
  const other = await create({ name: 'quarterly-report', routeId: 'ledger', path: '/ledger/report', every: undefined, cron: '0 6 1 */3 *', organisation: 'globex' });

  const c = await openScheduler();
  const { page } = c;
  try {
    const r = row(page, 'minutely-sync');
    await r.waitFor();
    // The gateway's clock is 12 minutes ahead of the browser's: the countdown is read on the gateway's.
    const next = (await r.getByRole('cell').nth(5).innerText()).split('\n');
    assert.equal(next[0], shownTime((await schedule(s.id)).nextRunAt, false));
    // (The feed states whole seconds: a second either way; the browser's clock would say 13 min.)
    assert.match(next[1]!, /^in (1 min( \d s)?|\d+ s)$/);
    await r.getByRole('button', { name: 'History' }).click();
    const history = page.getByRole('table', { name: 'Runs of minutely-sync' });
    const runRows = history.getByRole('row');
    await eventually('the first page', async () => assert.equal(await runRows.count(), 1 + 10));
    await page.getByRole('button', { name: 'More' }).click();
    await eventually('the second page', async () => assert.equal(await runRows.count(), 1 + 12));
    await page.getByRole('button', { name: 'More' }).waitFor({ state: 'detached' });

    // Every run once, newest first, as the API holds them; each failed run with its sentence.
    const api = (await root.get(`/api/schedules/${s.id}/runs?limit=500`)).json as Json[];
    assert.equal(api.length, 12);
    const texts = (await runRows.allInnerTexts()).slice(1);
    for (const [i, run] of api.entries()) {
      assert.ok(texts[i]!.startsWith(shownTime(run.endedAt, false)), `row ${i}: ${texts[i]}`);
      assert.match(texts[i]!, run.state === 'done' ? /done 200/ : /failed 500/);
    }
    const failed = api.filter((x) => x.state === 'failed');
    assert.equal(failed.length, 3);
    for (const f of failed) {
      assert.match(f.detail, /^500 .*Turn \d+ found the ledger locked\.$/);
      await history.getByText(f.detail, { exact: true }).waitFor();
    }
    assert.equal(await history.getByRole('button', { name: 'Replay' }).count(), 3, 'each failed turn can be replayed');

    // A turn ending while the history is open comes on top.
    await advance('PT1M');
    await eventually('the new turn', async () => assert.equal(await runRows.count(), 1 + 13));
    const newest = (await root.get(`/api/schedules/${s.id}/runs?limit=1`)).json[0];
    assert.ok((await runRows.nth(1).innerText()).startsWith(shownTime(newest.endedAt, false)));
    assert.equal((await root.post(`/api/schedules/${other.id}/pause`, undefined)).status, 200);
    await row(page, 'quarterly-report').getByRole('button', { name: 'Resume' }).waitFor();
    await c.screenshot('scheduler');

    // On a phone, the page does not overflow: the tables scroll in their frames.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(`(() => {
      const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.table-wrap'));
      return { by: document.documentElement.scrollWidth - document.documentElement.clientWidth, wide: wide.slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)) };
    })()`);
    await c.screenshot('scheduler-phone');
    assert.deepEqual(overflow, { by: 0, wide: [] });
    c.expectClean();
  } finally {
    up.handle(undefined);
    await c.context.close();
    await internal('DELETE', `/api/schedules/${s.id}`);
    await internal('DELETE', `/api/schedules/${other.id}`);
  }
});

test('an account without app-admin opening the screen reads the gateway\'s refusal', async () => {
  const created = await root.post('/api/accounts', { name: 'tls-ops', password: 'tls-ops-password-1', capabilities: ['infra-admin'] });
  assert.equal(created.status, 201, created.text);
  const refusal = await call(`${control}/api/schedules?limit=1`, { headers: { cookie: await signIn(control, 'tls-ops', 'tls-ops-password-1'), origin: control } });
  assert.equal(refusal.status, 403);
  await expectRefusedScreen(browser, control, {
    name: 'tls-ops', password: 'tls-ops-password-1', path: '/scheduler', heading: 'Scheduler', detail: refusal.json.detail,
    absent: (page) => page.getByRole('table'),
  });
});
