/**
 * The traffic metrics through a real gateway on the test clock (spec 1.5; CONTRACT.md "Metrics"):
 * the hour's curve filled in seconds of test time, the minute's numbers from merged histograms,
 * the rankings, per route its endpoints (declared and deduced, never a user, an address or a raw
 * path), health probes never counted, the capability, and the live feed moving with the clock.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openLive } from '../helpers/live.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { closedPort, startUpstream, type Upstream } from '../helpers/upstream.ts';

const CONTRACT = { openapi: '3.1.0', info: { title: 'shop', version: '1' }, paths: { '/orders/{id}': { get: {} } } };

let t: TestGateway;
let up: Upstream;
let root: Admin;
let control: string;
let data: string;

before(async () => {
  up = await startUpstream((req, res) => {
    const status = req.url?.includes('/boom') ? 500 : 200;
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  control = t.url('control');
  data = t.url('data');
  const session = await signInAdmin(control);
  const minted = await session.post('/api/tokens', { name: 'watcher', kind: 'admin' });
  root = adminWith(control, { authorization: `Bearer ${minted.json.token}` });
  await putOk(root, '/api/routes/shop', { upstream: up.origin, paths: ['/shop'], stripPrefix: true, openapi: CONTRACT });
  await putOk(root, '/api/routes/users', { upstream: up.origin, paths: ['/users'] });
  await putOk(root, '/api/routes/down', { upstream: `http://127.0.0.1:${await closedPort()}`, paths: ['/down'] });
});

after(async () => {
  await t.close();
  await up.close();
});

const advance = async (by: string) => {
  const a = await call(`${control}/__clock/advance`, { method: 'POST', body: { by }, headers: root.headers });
  assert.equal(a.status, 200, a.text);
  return a.json.now as number;
};
/** Lets the ring take what the requests told it: a call goes after the records told before it. */
const settled = () => t.gw.ctx.metrics.call('metrics.route', { id: 'shop' });

test('the hour is 720 points of 5 s; probes and the gateway\'s own APIs are not counted', async () => {
  await call(`${data}/healthz`);
  await call(`${data}/readyz`);
  await root.get('/api/routes');
  await settled();
  await advance('PT5S');
  const m = (await root.get('/api/metrics')).json;
  assert.equal(m.interval, 5);
  assert.equal(m.nodes, 1);
  assert.equal(m.points.length, 720);
  assert.ok(m.points.every((p: any) => p.answered === 0 && p.failed === 0), 'no probe, no API call counted');
  assert.ok(m.points.every((p: any, i: number) => i === 0 || p.t - m.points[i - 1].t === 5));
  assert.deepEqual(Object.keys(m.minute).sort(), ['failed', 'p50', 'p95', 'period', 'requests', 'rps']);
  assert.equal(m.minute.period, '60 s');
});

test('answered and failed per interval, the minute\'s five numbers, the rankings', async () => {
  for (let i = 0; i < 20; i++) await call(`${data}/shop/orders/${1000 + i}`);
  for (let i = 0; i < 4; i++) await call(`${data}/shop/boom`);
  for (let i = 0; i < 3; i++) await call(`${data}/down/x`);
  await settled();
  await advance('PT5S');
  const m = (await root.get('/api/metrics')).json;
  const last = m.points.at(-1);
  assert.deepEqual([last.answered, last.failed, last.nodes], [27, 7, 1], JSON.stringify(last));
  assert.equal(m.minute.requests, 27);
  assert.equal(m.minute.failed, 7);
  assert.equal(m.minute.rps, 27 / 60);
  assert.ok(m.minute.p95 >= m.minute.p50 && m.minute.p50 >= 0, JSON.stringify(m.minute));
  const shop = m.routes.find((r: any) => r.route === 'shop');
  assert.deepEqual([shop.requests, shop.failed], [24, 4]);
  assert.ok(shop.totalMs >= 0 && typeof shop.p95 === 'number');
  assert.deepEqual(m.rankings.failing.slice(0, 2), ['shop', 'down']);

  // A minute later the minute is empty again; the curve keeps the interval for the hour.
  await advance('PT60S');
  const later = (await root.get('/api/metrics')).json;
  assert.equal(later.minute.requests, 0);
  assert.ok(later.points.some((p: any) => p.answered === 27));
});

test('endpoints: declared, deduced with identifiers folded; never a user name, an address or a query', async () => {
  for (const id of [7, 8, 9]) await call(`${data}/shop/orders/${id}?email=alice@example.com`);
  // One caller's name alone, the first at its position: still no label (a member of `users`).
  await call(`${data}/users/alice/profile?from=10.1.2.3`);
  await settled();
  await advance('PT5S');
  const first = JSON.stringify((await root.get('/api/metrics/routes/users')).json);
  assert.ok(!first.includes('alice'), first);
  for (const name of ['bob', 'carol', 'dave', 'erin']) await call(`${data}/users/${name}/profile?from=10.1.2.3`);
  await call(`${data}/users/alice@example.com/profile`);
  await call(`${data}/users/10.1.2.3/profile`);
  await settled();
  await advance('PT5S');
  const shop = (await root.get('/api/metrics/routes/shop')).json;
  assert.equal(shop.period, '60 s');
  const declared = shop.endpoints.find((e: any) => e.template === 'GET /orders/{id}');
  assert.ok(declared, JSON.stringify(shop.endpoints));
  assert.equal(declared.deduced, false);
  assert.equal(declared.requests, 3);
  const users = (await root.get('/api/metrics/routes/users')).json;
  const text = JSON.stringify(users);
  for (const leak of ['alice', 'bob', 'carol', 'dave', 'erin', 'example.com', '10.1.2.3', 'from=']) assert.ok(!text.includes(leak), `${leak} in ${text}`);
  const folded = users.endpoints.find((e: any) => e.template === 'GET /users/{id}/profile');
  assert.ok(folded, text);
  assert.equal(folded.deduced, true);
  assert.equal(folded.requests, 7);

  await advance('PT60S');
  const history = (await root.get('/api/metrics/routes/shop')).json.endpoints.find((e: any) => e.template === 'GET /orders/{id}').history;
  assert.ok(history.length >= 1 && history.length <= 70, JSON.stringify(history));
  assert.equal((await root.get('/api/metrics/routes/nowhere')).status, 404);
  // Sharing with other nodes (PostgreSQL; the SQLite file serves one node) makes no complaint, and
  // this node's own history is not counted twice.
  await advance('PT5S');
  const again = (await root.get('/api/metrics/routes/shop')).json;
  assert.equal(again.nodes, 1);
  assert.deepEqual(again.endpoints.find((e: any) => e.template === 'GET /orders/{id}').history, history);
  assert.ok(!t.logs.some((r) => /cannot be shared|could not be closed/.test(r.msg)), JSON.stringify(t.logs.filter((r) => r.level !== 'info').map((r) => r.msg)));
});

test('root or gateway-admin; the live feed starts with the snapshot and moves with each interval', async () => {
  const clerk = await root.post('/api/accounts', { name: 'clerk', password: 'clerk-password-1', capabilities: ['infra-admin'] });
  assert.equal(clerk.status, 201, clerk.text);
  const token = await root.post('/api/tokens', { name: 'clerk-admin', kind: 'admin', account: 'clerk' });
  const asClerk = adminWith(control, { authorization: `Bearer ${token.json.token}` });
  assert.equal((await asClerk.get('/api/metrics')).status, 403);
  assert.equal((await asClerk.get('/api/metrics/routes/shop')).status, 403);
  assert.equal((await asClerk.get('/api/metrics?x=1')).status, 403, 'the capability first');
  // A query parameter is refused, never ignored.
  for (const path of ['/api/metrics?x=1', '/api/metrics/routes/shop?since=5']) {
    const a = await root.get(path);
    assert.deepEqual([a.status, a.json.code], [400, 'filter.invalid'], path);
  }

  const feed = openLive(control, '/api/metrics/live', { authorization: root.headers.authorization! });
  const waitFor = (pred: (m: any) => boolean) => feed.next(pred, 'the message looked for');
  try {
    const hello = await waitFor((m) => m.type === 'hello');
    assert.equal(hello.metrics.points.length, 720);
    for (let i = 0; i < 5; i++) await call(`${data}/shop/orders/${i}`);
    await settled();
    await advance('PT5S');
    const interval = await waitFor((m) => m.type === 'interval' && m.point.answered === 5);
    assert.equal(interval.point.t, hello.metrics.points.at(-1).t + 5);
    assert.equal(interval.nodes, 1);
    assert.equal(interval.minute.requests, 5);
    // A minute at once (the clock moved, or the loop stalled): the next close covers every interval
    // behind it, and the feed sends one message each, empty ones included, in order: no gap.
    const before = feed.messages.length;
    await call(`${data}/shop/orders/late`);
    await settled();
    await advance('PT60S');
    // The close that ran at the jump's first boundary is sent; the ring's next close is due 5 s on.
    await waitFor((m) => m.type === 'interval' && m.point.t === interval.point.t + 5);
    await advance('PT5S');
    await waitFor((m) => m.type === 'interval' && m.point.t === interval.point.t + 65);
    const caught = feed.messages.slice(before).filter((m) => m.type === 'interval');
    assert.deepEqual(caught.map((m) => m.point.t - interval.point.t), Array.from({ length: 13 }, (_, i) => 5 * (i + 1)));
    assert.deepEqual(caught.map((m) => m.point.answered), [1, ...Array(12).fill(0)]);
  } finally {
    await feed.close();
  }
});

test('a route named after a member of every JavaScript object is measured like any other', async () => {
  for (const id of ['constructor', 'toString', '__proto__']) {
    const put = await root.put(`/api/routes/${id}`, { upstream: up.origin, paths: [`/${id.replaceAll('_', 'u')}`] });
    if (id === '__proto__') {
      assert.equal(put.status, 400, 'not a name');
      continue;
    }
    assert.equal(put.status, 201, put.text);
    await call(`${data}/${id}/orders/1`);
  }
  await settled();
  await advance('PT5S');
  for (const id of ['constructor', 'toString']) {
    const answer = await root.get(`/api/metrics/routes/${id}`);
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json.endpoints.map((e: any) => [e.template, e.requests]), [[`GET /${id}/orders/{id}`, 1]], answer.text);
  }
  const routes = (await root.get('/api/metrics')).json.routes.map((r: any) => r.route);
  assert.ok(routes.includes('constructor') && routes.includes('toString'), JSON.stringify(routes));
});

test('an exchange counts in the interval the gateway\'s clock was in when it ended, however long it took in real time', async () => {
  // The test clock stands 1 ms before an interval's end while a call takes 40 ms of real time: the
  // call ended in that interval by the gateway's clock, and is counted there, not in the next.
  const edge = Math.ceil(Date.now() / 5_000) * 5_000 + 60_000;
  const slow = await startUpstream((_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
      res.end('ok');
    }, 40);
  });
  const g = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_CLOCK_START: String(edge - 1) });
  try {
    const admin = await signInAdmin(g.url('control'));
    await putOk(admin, '/api/routes/slow', { upstream: slow.origin, paths: ['/slow'] });
    for (let i = 0; i < 3; i++) assert.equal((await call(`${g.url('data')}/slow/x`)).status, 200);
    await g.gw.ctx.metrics.call('metrics.route', { id: 'slow' });
    const moved = await call(`${g.url('control')}/__clock/advance`, { method: 'POST', body: { by: 'PT1S' }, headers: admin.headers });
    assert.equal(moved.status, 200, moved.text);
    const last = (await admin.get('/api/metrics')).json.points.at(-1);
    assert.equal(last.t * 1000, edge - 5_000, JSON.stringify(last));
    assert.deepEqual([last.answered, last.failed], [3, 0], JSON.stringify(last));
  } finally {
    await g.close();
    await slow.close();
  }
});
