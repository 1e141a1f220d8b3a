/**
 * The Metrics screen in a real browser (spec 1.5): traffic sent through a route to a real
 * upstream shows on the page as the test clock closes each 5-s interval, without a reload: the
 * curve's last point, the minute's five numbers with their period, the three rankings, and a
 * route's endpoints with the deduced template marked. An account without gateway-admin reads the
 * API's refusal.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';
import { expectRefusedScreen, launchBrowser, openConsole, signInThroughPage, type ConsolePage } from '../helpers/browser.ts';

// The shop route declares its endpoints; the users route leaves them to deduction.
const CONTRACT = { openapi: '3.1.0', info: { title: 'shop', version: '1' }, paths: { '/orders/{id}': { get: {} } } };

let t: TestGateway;
let up: Upstream;
let root: Admin;
let browser: Browser;
let control: string;
let data: string;
/** Intervals the ring closed and told the main thread (what the live feed sends). */
let closed = 0;

before(async () => {
  up = await startUpstream((req, res) => {
    res.writeHead(req.url?.includes('/boom') ? 500 : 200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  t.gw.ctx.metrics.follow(() => { closed++; });
  control = t.url('control');
  data = t.url('data');
  root = await signInAdmin(control);
  await putOk(root, '/api/routes/shop', { upstream: up.origin, paths: ['/shop'], stripPrefix: true, openapi: CONTRACT });
  await putOk(root, '/api/routes/users', { upstream: up.origin, paths: ['/users'] });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await t?.close();
  await up?.close();
});

/** Closes the interval the requests fell in: the ring first takes what they told it, then the clock moves. */
async function closeInterval(): Promise<void> {
  await t.gw.ctx.metrics.call('metrics.route', { id: 'shop' });
  const before = closed;
  const a = await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT5S' }, headers: root.headers });
  assert.equal(a.status, 200, a.text);
  // The ring's tick writes and reads the nodes' summaries before it tells the interval. A second
  // move during that tick would put the next one 5 s after its end, past the interval just closed,
  // which would then reach the page only at the move after: each move waits for its tick.
  await until(() => (closed > before ? true : undefined), 'the ring telling the interval it closed');
}

async function send(path: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const r = await call(`${data}${path.replace('{n}', String(1000 + i))}`);
    assert.ok(r.status === 200 || r.status === 500, `${path}: ${r.status}`);
  }
}

/** The curve's last point as the page states it (the figure's data, since a canvas says nothing). */
async function lastPointIs(c: ConsolePage, answered: number, failed: number): Promise<void> {
  const figure = c.page.getByRole('figure');
  await until(async () => {
    const [a, f] = [await figure.getAttribute('data-answered'), await figure.getAttribute('data-failed')];
    return a === String(answered) && f === String(failed) ? true : undefined;
  }, `the curve's last point ${answered} answered, ${failed} failed`);
  await figure.getByText(`${answered} answered`).first().waitFor();
}

async function numberIs(c: ConsolePage, name: string, value: string | RegExp): Promise<string> {
  // Each number is labelled by its term (aria-labelledby).
  const dd = c.page.getByLabel(name, { exact: true });
  await dd.filter({ hasText: value }).waitFor();
  return (await dd.textContent()) ?? '';
}

test('the screen moves with each interval: the curve, the minute\'s five numbers, the rankings and a route\'s endpoints, deduced marked', async () => {
  const c = await openConsole(browser, control);
  try {
    await signInThroughPage(c, 'root', undefined, '/data-plane/metrics');
    await c.page.getByRole('heading', { level: 1, name: 'Metrics' }).waitFor();
    await c.page.getByRole('status', { name: 'Live feed' }).filter({ hasText: 'Live' }).waitFor();
    await c.page.getByRole('heading', { name: 'Over the last 60 s', exact: true }).waitFor();
    await numberIs(c, 'Requests', /^0$/);
    await c.page.getByRole('img', { name: 'Answered and failed requests per 5-second interval over the last hour' }).waitFor();

    // First interval: 12 declared orders, 3 failures, 5 paths whose identifiers the gateway folds.
    await send('/shop/orders/{n}', 12);
    await send('/shop/boom', 3);
    await send('/users/{n}/profile', 5);
    await closeInterval();
    await lastPointIs(c, 20, 3);
    await c.page.getByRole('figure').getByText('it covers 1 node').waitFor();
    assert.match(await c.page.getByText(/summed over 1 node; the last interval covers 1 node/).textContent() ?? '', /covers 1 node/);
    // Under the cursor, the legend names the interval and the nodes its point covers.
    const plot = await c.page.getByRole('img', { name: 'Answered and failed requests per 5-second interval over the last hour' }).boundingBox();
    assert.ok(plot);
    await c.page.mouse.move(plot.x + plot.width / 2, plot.y + plot.height / 2, { steps: 3 });
    // The last of 720 points sits on the plot's right edge: the pointer goes within half a point of it.
    await c.page.mouse.move(plot.x + plot.width - 0.25, plot.y + plot.height / 2, { steps: 3 });
    await c.page.getByRole('figure').getByRole('row', { name: /^Interval/ }).getByRole('cell').filter({ hasText: /, covers 1 node$/ }).waitFor();
    await c.page.getByRole('figure').getByRole('row', { name: /^Answered/ }).getByRole('cell', { name: '20', exact: true }).waitFor();
    await c.page.mouse.move(0, 0);
    await numberIs(c, 'Requests', /^20$/);
    await numberIs(c, 'Failed', /^3$/);
    assert.equal(await numberIs(c, 'Requests per second', /\d/), '0.333');
    assert.match(await numberIs(c, 'p50', /ms$/), /^\d+(\.\d)? ms$/);
    assert.match(await numberIs(c, 'p95', /ms$/), /^\d+(\.\d)? ms$/);

    // The rankings name the routes; only shop failed.
    const failing = c.page.getByRole('table', { name: 'Failing routes' });
    await failing.getByRole('button', { name: 'shop' }).waitFor();
    assert.equal(await failing.getByRole('button', { name: 'users' }).count(), 0, 'users did not fail');
    const slowest = c.page.getByRole('table', { name: 'Slowest routes (p95)' });
    await slowest.getByRole('button', { name: 'users' }).waitFor();
    await slowest.getByRole('button', { name: 'shop' }).waitFor();
    const byTime = c.page.getByRole('table', { name: 'Routes by total time' });
    assert.equal(await byTime.getByRole('row').count(), 3, 'a header and the two routes');

    // A route's endpoints: deduced templates are marked, declared ones are not.
    await byTime.getByRole('button', { name: 'users' }).click();
    const users = c.page.getByRole('table', { name: 'Endpoints of users' });
    const folded = users.getByRole('row').filter({ hasText: 'GET /users/{id}/profile' });
    await folded.waitFor();
    assert.match(await folded.textContent() ?? '', /deduced/);
    assert.deepEqual(await folded.getByRole('cell').allTextContents().then((cells) => cells.slice(1, 3)), ['5', '0']);
    assert.ok(!(await users.textContent())?.includes('1000'), 'no raw path is a label');

    await failing.getByRole('button', { name: 'shop' }).click();
    assert.equal(new URL(c.page.url()).search, '?route=shop', 'the chosen route is in the address');
    const shop = c.page.getByRole('table', { name: 'Endpoints of shop' });
    const orders = shop.getByRole('row').filter({ hasText: 'GET /orders/{id}' });
    await orders.waitFor();
    assert.match(await orders.textContent() ?? '', /declared/);
    assert.doesNotMatch(await orders.textContent() ?? '', /deduced/);
    assert.deepEqual((await orders.getByRole('cell').allTextContents()).slice(1, 3), ['12', '0']);
    const boom = shop.getByRole('row').filter({ hasText: 'GET /boom' });
    assert.deepEqual((await boom.getByRole('cell').allTextContents()).slice(1, 3), ['3', '3']);

    // Next interval, still no reload: the curve's new point, the minute grown, the endpoints moved.
    await send('/shop/orders/{n}', 7);
    await closeInterval();
    await lastPointIs(c, 7, 0);
    await numberIs(c, 'Requests', /^27$/);
    await numberIs(c, 'Failed', /^3$/);
    await orders.getByRole('cell', { name: '19', exact: true }).waitFor();
    await c.page.getByRole('figure').getByText('Over the hour: 27 answered, 3 failed').waitFor();

    // A minute on, the minute is empty again while the hour keeps its points.
    for (let i = 0; i < 12; i++) await closeInterval();
    await numberIs(c, 'Requests', /^0$/);
    await numberIs(c, 'p95', /^—$/);
    await lastPointIs(c, 0, 0);
    await c.page.getByRole('figure').getByText('Over the hour: 27 answered, 3 failed').waitFor();
    await c.page.getByRole('table', { name: 'Failing routes' }).getByText('No route failed in this minute.').waitFor();

    // Back to a richer minute for the picture.
    await send('/shop/orders/{n}', 9);
    await send('/shop/boom', 2);
    await send('/users/{n}/profile', 4);
    await closeInterval();
    await lastPointIs(c, 15, 2);
    await orders.getByRole('cell', { name: '9', exact: true }).waitFor();
    // The address keeps the chosen route: a reload shows its endpoints again.
    await c.page.reload();
    await orders.getByRole('cell', { name: '9', exact: true }).waitFor();
    await lastPointIs(c, 15, 2);
    await c.screenshot('metrics');
    c.expectClean();
  } finally {
    await c.context.close();
  }
});

test('an account without gateway-admin reads the API\'s refusal, on a phone-width screen', async () => {
  const made = await root.post('/api/accounts', { name: 'watcher', password: 'watcher-password-1', capabilities: ['infra-admin'] });
  assert.equal(made.status, 201, made.text);
  const said = await (await signInAdmin(control, 'watcher', 'watcher-password-1')).get('/api/metrics');
  assert.equal(said.status, 403);
  assert.equal(said.json.detail, 'This action needs the gateway-admin capability (or root).');
  await expectRefusedScreen(browser, control, {
    name: 'watcher', password: 'watcher-password-1', path: '/data-plane/metrics', heading: 'Metrics', detail: said.json.detail,
    absent: (page) => page.getByRole('figure'),
    viewport: { width: 390, height: 844 },
    also: async (c) => assert.equal(await c.page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: 'Metrics' }).count(), 0),
  });
});
