/**
 * The logs through a real gateway (spec 1.4, 2.7; CONTRACT.md "Logs"): the access log on every
 * plane and for scheduled calls, its outcomes and its fields, the level set at run time with its
 * 30-minute return on the test clock, the console buffer, its export and its live feed, and the
 * output modes (agent objects, the collector push to a real OTLP/HTTP receiver). The gateway's
 * standard output and error are files of the test here, read as an agent would read the streams.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, readFileSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLive } from '../helpers/live.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { adminWith, personWithToken, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { closedPort, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { internalWith, schedulesToken } from '../helpers/scheduler.ts';
import { VERSION } from '../../src/version.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE}-00f067aa0ba902b7-01`;
const CONTRACT = {
  openapi: '3.1.0', info: { title: 'shop', version: '1' },
  paths: { '/orders/{id}': { get: { summary: 'one order' } }, '/orders': { post: { summary: 'place an order' } } },
};

let t: TestGateway;
let up: Upstream;
let otlp: OtlpReceiver;
let root: Admin;
let control: string;
let data: string;
let dir: string;
let outFd: number;
let errFd: number;
/** How much of each output the tests have read already. */
const seen = { out: 0, err: 0 };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meerkat-logs-'));
  outFd = openSync(join(dir, 'stdout'), 'w');
  errFd = openSync(join(dir, 'stderr'), 'w');
  otlp = await startOtlpReceiver();
  up = await startUpstream((req, res, received) => {
    const status = req.url?.includes('/missing') ? 404 : req.url?.includes('/boom') ? 500 : 200;
    const body = JSON.stringify({ url: received.url });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  t = await startTestGateway({
    GATEWAY_CLOCK: 'manual', GATEWAY_EDITION: 'licensed', GATEWAY_OTLP_ENDPOINT: otlp.url,
    GATEWAY_LOG_LEVEL: 'info', GATEWAY_LOG_FORMAT: 'json', GATEWAY_NODE_NAME: 'node-a',
  }, undefined, { outputs: { stdoutFd: outFd, stderrFd: errFd } });
  control = t.url('control');
  data = t.url('data');
  // A token: the test clock moves 30 minutes, and a console session would expire.
  const session = await signInAdmin(control);
  const minted = await session.post('/api/tokens', { name: 'operator', kind: 'admin' });
  root = adminWith(control, { authorization: `Bearer ${minted.json.token}` });
  await putOk(root, '/api/routes/shop', { upstream: `${up.origin}/svc`, paths: ['/shop'], stripPrefix: true, openapi: CONTRACT });
  await putOk(root, '/api/roles/staff', { implies: [] });
  await putOk(root, '/api/routes/guarded', { upstream: up.origin, paths: ['/guarded'], rule: { roles: ['staff'] } });
  await putOk(root, '/api/routes/down', { upstream: `http://127.0.0.1:${await closedPort()}`, paths: ['/down'] });
});

after(async () => {
  await t.close();
  await up.close();
  await otlp.close();
  closeSync(outFd);
  closeSync(errFd);
  rmSync(dir, { recursive: true, force: true });
});

/** The lines written since the last read, once the shipper has written what it was handed. */
async function fresh(stream: 'out' | 'err'): Promise<any[]> {
  await t.gw.ctx.logs.shipper.settle();
  const text = readFileSync(join(dir, stream === 'out' ? 'stdout' : 'stderr'), 'utf8');
  const lines = text.slice(seen[stream]).split('\n').filter(Boolean);
  seen[stream] = text.length;
  return lines.map((l) => JSON.parse(l));
}

const settings = (body: unknown) => root.put('/api/settings/logs', body);

test('the access log is off by default: requests write nothing on standard output', async () => {
  const s = await root.get('/api/settings/logs');
  assert.equal(s.status, 200, s.text);
  assert.equal(s.json.accessLog, false);
  assert.equal(s.json.mode, 'startup');
  await call(`${data}/shop/orders/1`);
  await call(`${data}/nowhere`);
  assert.deepEqual(await fresh('out'), []);
  await fresh('err');
});

test('switched on, every request of every plane is one line of 2.7 on standard output, refusals included', async () => {
  const on = await settings({ accessLog: true });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.json.accessLog, true);
  const person = await personWithToken(root, 'alice', []);
  await fresh('out');

  const secret = 'body-secret-7c1f';
  await call(`${data}/shop/orders/42?api_key=query-secret-91ad`, {
    headers: { authorization: `Bearer ${person.token}`, traceparent: TRACEPARENT, 'x-forwarded-for': '203.0.113.9' },
  });
  await call(`${data}/shop/orders`, { method: 'POST', body: { card: secret } });
  await call(`${data}/shop/missing`);
  await call(`${data}/shop/boom`);
  await call(`${data}/down/x`);
  await call(`${data}/guarded/x`);
  await call(`${data}/nowhere`);
  await root.get('/api/routes');
  await call(`${t.url('internal')}/api/schedules`);

  const lines = await fresh('out');
  const text = JSON.stringify(lines);
  assert.ok(!text.includes(secret), 'a request body is never logged');
  assert.ok(!text.includes('query-secret-91ad'), 'the query string is not logged');
  assert.equal(lines.length, 9, text);
  for (const l of lines) {
    assert.equal(l.type, 'access');
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Number.isInteger(l.ms) && l.ms >= 0);
  }
  const [order, placed, missing, boom, down, guarded, nowhere, routes, internal] = lines;
  assert.deepEqual(
    { method: order.method, path: order.path, endpoint: order.endpoint, route: order.route, status: order.status, outcome: order.outcome, user: order.user, token: order.token, ip: order.ip, trace_id: order.trace_id, plane: order.plane },
    { method: 'GET', path: '/shop/orders/42', endpoint: 'GET /orders/{id}', route: 'shop', status: 200, outcome: 'ok', user: 'alice', token: 'alice-app', ip: '127.0.0.1', trace_id: TRACE, plane: 'data' },
    'a caller-written X-Forwarded-For is not believed; the endpoint is the declared template',
  );
  assert.equal(placed.endpoint, 'POST /orders');
  assert.equal(placed.user, undefined, 'nobody authenticated: no user');
  assert.deepEqual([missing.status, missing.outcome, missing.endpoint], [404, 'rejected', undefined]);
  assert.deepEqual([boom.status, boom.outcome], [500, 'failed']);
  assert.deepEqual([down.status, down.outcome, down.route], [502, 'upstream-down', 'down']);
  assert.deepEqual([guarded.status, guarded.outcome, guarded.route], [401, 'refused', 'guarded']);
  assert.deepEqual([nowhere.status, nowhere.outcome, nowhere.route], [404, 'refused', undefined]);
  assert.deepEqual([routes.plane, routes.status, routes.outcome, routes.token, routes.user], ['control', 200, 'ok', 'operator', 'root']);
  assert.deepEqual([internal.plane, internal.status, internal.outcome], ['internal', 401, 'refused']);

  const err = await fresh('err');
  assert.ok(err.every((l) => l.type === 'app'), 'standard error holds the operational log only');
  assert.ok(err.some((l) => l.msg === 'access log switched on'));
  const downs = err.filter((l) => /^upstream down/.test(l.msg));
  assert.equal(downs.length, 1, 'the operational log says an upstream is down');
  assert.deepEqual([downs[0].level, downs[0].code], ['warn', 'upstream.unreachable']);
  await call(`${data}/down/again`);
  assert.equal((await fresh('err')).filter((l) => /^upstream down/.test(l.msg)).length, 0, 'once, not once per request');
});

test('a live feed\'s upgrade is an exchange of the access log: 101 with its caller, and each refusal', async () => {
  assert.equal((await settings({ accessLog: true })).status, 200);
  await fresh('out');
  const feed = openLive(control, '/api/metrics/live', { authorization: root.headers.authorization! });
  await feed.next((m) => m.type === 'hello', 'the hello');
  await feed.close();
  // No credentials, a token the gateway does not know, and another site's Origin with no session.
  const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer mk_not_a_token_of_this_gateway' }, { origin: 'http://evil.example' }];
  for (const headers of attempts) {
    await openLive(control, '/api/logs/live', headers).closed;
  }
  const lines = (await fresh('out')).filter((l) => l.path === '/api/metrics/live' || l.path === '/api/logs/live');
  assert.deepEqual(lines.map((l) => [l.path, l.status, l.outcome, l.user, l.token]), [
    ['/api/metrics/live', 101, 'ok', 'root', 'operator'],
    ['/api/logs/live', 401, 'refused', undefined, undefined],
    ['/api/logs/live', 401, 'refused', undefined, undefined],
    ['/api/logs/live', 401, 'refused', undefined, undefined],
  ]);
  assert.ok(lines.every((l) => l.plane === 'control' && l.method === 'GET'));
  assert.ok(!JSON.stringify(lines).includes('mk_not_a_token'), 'never the token tried');
});

test('a known token on the wrong plane is refused with 403 token-kind, and its access line names it', async () => {
  assert.equal((await settings({ accessLog: true })).status, 200);
  const person = await personWithToken(root, 'tkind', []);
  await fresh('out');
  const admin = root.headers.authorization!;
  assert.equal((await call(`${data}/shop/orders/1`, { headers: { authorization: admin } })).status, 403);
  assert.equal((await call(`${control}/api/routes`, { headers: { authorization: `Bearer ${person.token}` } })).status, 403);
  assert.equal((await call(`${t.url('internal')}/api/schedules`, { headers: { authorization: admin } })).status, 403);
  // The same on a live feed's upgrade: a personal token, and an admin token without the capability.
  const adminOfNobody = await root.post('/api/tokens', { name: 'tkind-admin', kind: 'admin', account: 'tkind' });
  assert.equal(adminOfNobody.status, 201, adminOfNobody.text);
  await openLive(control, '/api/logs/live', { authorization: `Bearer ${person.token}` }).closed;
  await openLive(control, '/api/logs/live', { authorization: `Bearer ${adminOfNobody.json.token}` }).closed;
  const lines = (await fresh('out')).filter((l) => l.status === 403);
  assert.deepEqual(lines.map((l) => [l.plane, l.path, l.outcome, l.user, l.token]), [
    ['data', '/shop/orders/1', 'refused', 'root', 'operator'],
    ['control', '/api/routes', 'refused', 'tkind', 'tkind-app'],
    ['internal', '/api/schedules', 'refused', 'root', 'operator'],
    ['control', '/api/logs/live', 'refused', 'tkind', 'tkind-app'],
    ['control', '/api/logs/live', 'refused', 'tkind', 'tkind-admin'],
  ]);
});

test('a LogShipper that dies is restarted: access lines made before and during its restart reach standard output once each', async () => {
  assert.equal((await settings({ accessLog: true })).status, 200);
  await fresh('out');
  const host = t.gw.ctx.logs.shipper.host;
  const before = host.threadId;
  const paths = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `/shop/orders/${tag}-${i}`);
  const first = paths(50, 'before');
  for (const p of first) await call(`${data}${p}`);
  await host.kill();
  const during = paths(50, 'during');
  for (const p of during) assert.equal((await call(`${data}${p}`)).status, 200);
  const lines = await fresh('out');
  assert.notEqual(host.threadId, before, 'a new worker thread');
  const written = lines.map((l) => l.path).filter((p: string) => /^\/shop\/orders\/(before|during)-/.test(p));
  // A line the dead shipper had taken and not written is written again by the next: each line at
  // least once, in order, and only a line of the moment of the kill more than once.
  const once = [...new Set(written)];
  assert.deepEqual(once, [...first, ...during]);
  assert.ok(written.length - once.length <= first.length, `${written.length - once.length} lines written twice`);
});

test('a scheduled call is in the access log as the scheduler, with its schedule', async () => {
  await putOk(root, '/api/roles/jobs', { implies: [] });
  const token = await schedulesToken(root, 'shop-jobs', ['shop'], ['jobs']);
  const internal = internalWith(() => t.url('internal'), () => token);
  const created = await internal('POST', '/api/schedules', { routeId: 'shop', path: '/shop/orders', every: 'PT1H', roles: ['jobs'], body: { card: 'scheduled-secret-5d2e' } });
  assert.equal(created.status, 201, created.text);
  await fresh('out');
  const ran = await internal('POST', `/api/schedules/${created.json.id}/run`);
  assert.equal(ran.status, 202, ran.text);
  let line: any;
  for (let i = 0; i < 200 && !line; i++) {
    line = (await fresh('out')).find((l) => l.schedule === created.json.id);
    if (!line) await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(line, 'the scheduled call was logged');
  assert.deepEqual(
    { user: line.user, method: line.method, path: line.path, route: line.route, endpoint: line.endpoint, status: line.status, outcome: line.outcome, ip: line.ip, plane: line.plane },
    { user: 'scheduler', method: 'POST', path: '/shop/orders', route: 'shop', endpoint: 'POST /orders', status: 200, outcome: 'ok', ip: undefined, plane: 'internal' },
  );
  assert.ok(!JSON.stringify(line).includes('scheduled-secret-5d2e'));
  await internal('DELETE', `/api/schedules/${created.json.id}`);
});

test('the level moves at once, a more talkative one returns after 30 minutes, and the access log is never silenced', async () => {
  const before = await root.get('/api/settings/logs');
  assert.deepEqual([before.json.level, before.json.startupLevel, before.json.revertsAt], ['info', 'info', null]);
  const now = (await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT0S' }, headers: root.headers })).json.now as number;

  const debug = await settings({ level: 'debug' });
  assert.equal(debug.status, 200, debug.text);
  assert.equal(debug.json.level, 'debug');
  assert.equal(debug.json.revertsAt, Math.floor((now + 30 * 60_000) / 1000));
  assert.equal(t.gw.ctx.hub.level, 'debug');

  await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT29M59S' }, headers: root.headers });
  assert.equal((await root.get('/api/settings/logs')).json.level, 'debug', 'still debug a second before');
  await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT1S' }, headers: root.headers });
  const back = await root.get('/api/settings/logs');
  assert.deepEqual([back.json.level, back.json.revertsAt], ['info', null]);
  const err = await fresh('err');
  assert.ok(err.some((l) => l.msg === 'the operational log level returned to its startup level'), JSON.stringify(err));

  const quiet = await settings({ level: 'error' });
  assert.deepEqual([quiet.json.level, quiet.json.revertsAt], ['error', null], 'a quieter level does not return');
  await fresh('out');
  await call(`${data}/shop/orders/7`);
  const lines = await fresh('out');
  assert.equal(lines.length, 1, 'turning the level down does not silence the access log');
  assert.equal((await settings({ level: 'info' })).json.level, 'info');

  // Each change of the settings is one line of the trail, the level compared, never its date.
  await t.gw.ctx.audit.call('audit.settle', null);
  const trail = await root.get('/api/audit?targetKind=settings');
  const changes = trail.json.events.filter((e: any) => e.target?.id === 'logs');
  assert.ok(changes.length >= 4, trail.text);
  assert.ok(changes.some((e: any) => JSON.stringify(e.changes).includes('"debug"')), JSON.stringify(changes[0]));
});

test('the console buffer: filters, limit, export as .jsonl, capability; the access log is not in it', async () => {
  t.gw.ctx.log.warn('a warning for the buffer', { zone: 'north-7' });
  t.gw.ctx.log.info('an info line for the buffer', { zone: 'south-3' });
  const all = await root.get('/api/logs');
  assert.equal(all.status, 200, all.text);
  assert.equal(all.json.node, 'node-a');
  const last = all.json.lines.at(-1);
  assert.deepEqual(Object.keys(last).sort(), ['attrs', 'level', 'message', 'node', 'time']);
  assert.equal(last.message, 'an info line for the buffer');
  assert.ok(!all.json.lines.some((l: any) => l.attrs?.type === 'access' || /^GET \//.test(l.message)), 'no access line');

  const warns = await root.get('/api/logs?level=warn&q=NORTH');
  assert.deepEqual(warns.json.lines.map((l: any) => l.message), ['a warning for the buffer']);
  const two = await root.get('/api/logs?limit=2');
  assert.deepEqual(two.json.lines.map((l: any) => l.message), all.json.lines.slice(-2).map((l: any) => l.message));

  const exported = await root.get('/api/logs/export?q=buffer');
  assert.equal(exported.status, 200);
  assert.match(String(exported.headers['content-type']), /^application\/jsonl/);
  assert.match(String(exported.headers['content-disposition']), /attachment; filename="meerkat-logs-node-a-.*\.jsonl"/);
  const rows = exported.text.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(rows.map((r) => r.message), ['a warning for the buffer', 'an info line for the buffer']);

  assert.equal((await root.get('/api/logs?level=loud')).json.code, 'field.invalid');
  assert.equal((await root.get('/api/logs?lvl=warn')).json.code, 'filter.invalid');
  const clerk = await root.post('/api/accounts', { name: 'clerk', password: 'clerk-password-1', capabilities: ['app-admin'] });
  assert.equal(clerk.status, 201, clerk.text);
  const clerkToken = await root.post('/api/tokens', { name: 'clerk-admin', kind: 'admin', account: 'clerk' });
  const asClerk = adminWith(control, { authorization: `Bearer ${clerkToken.json.token}` });
  for (const path of ['/api/logs', '/api/logs/export', '/api/settings/logs']) {
    const refused = await asClerk.get(path);
    assert.deepEqual([refused.status, refused.json.code], [403, 'capability'], path);
  }
  assert.equal((await asClerk.put('/api/settings/logs', { level: 'debug' })).status, 403);
});

test('the live feed opens with the buffer, then sends each line and each move of the level', async () => {
  const feed = openLive(control, '/api/logs/live?level=info', { authorization: root.headers.authorization! });
  const waitFor = (pred: (m: any) => boolean) => feed.next(pred, 'the message looked for');
  try {
    const hello = await waitFor((m) => m.type === 'hello');
    assert.equal(hello.node, 'node-a');
    assert.equal(hello.level, 'info');
    assert.ok(hello.lines.some((l: any) => l.message === 'a warning for the buffer'));
    t.gw.ctx.log.debug('below the feed filter');
    t.gw.ctx.log.warn('live warning', { n: 1 });
    const line = await waitFor((m) => m.type === 'line' && m.line.message === 'live warning');
    assert.deepEqual(line.line.attrs, { n: 1 });
    assert.ok(!feed.messages.some((m) => m.type === 'line' && m.line.message === 'below the feed filter'));
    await settings({ level: 'debug' });
    const level = await waitFor((m) => m.type === 'level' && m.level === 'debug');
    assert.equal(typeof level.revertsAt, 'number');
    await settings({ level: 'info' });
  } finally {
    await feed.close();
  }
  const plain = await root.get('/api/logs/live');
  assert.deepEqual([plain.status, plain.json.code], [426, 'upgrade-required']);
});

test('agent mode: one object per line with OpenTelemetry names on both streams, the version in the resource', async () => {
  const agent = await settings({ mode: 'agent' });
  assert.equal(agent.json.mode, 'agent');
  await fresh('out');
  await fresh('err');
  await call(`${data}/shop/orders/9`, { headers: { traceparent: TRACEPARENT } });
  t.gw.ctx.log.warn('said for an agent', { part: 'test' });
  const [access] = await fresh('out');
  const app = (await fresh('err')).find((l) => l.body === 'said for an agent');
  const resource = { 'service.name': 'meerkat', 'service.version': VERSION, 'service.instance.id': 'node-a' };
  assert.deepEqual(Object.keys(access).sort(), ['attributes', 'body', 'resource', 'severity_number', 'severity_text', 'timestamp', 'trace_id']);
  assert.deepEqual(access.resource, resource);
  assert.equal(access.trace_id, TRACE);
  assert.deepEqual([access.severity_text, access.severity_number], ['INFO', 9]);
  assert.equal(access.attributes.type, 'access');
  assert.equal(access.attributes.endpoint, 'GET /orders/{id}');
  assert.equal(access.attributes.status, 200);
  assert.ok(app, 'the operational line reached standard error');
  assert.deepEqual(Object.keys(app).sort(), ['attributes', 'body', 'resource', 'severity_number', 'severity_text', 'timestamp']);
  assert.deepEqual([app.severity_text, app.severity_number, app.attributes.part, app.attributes.type], ['WARN', 13, 'test', 'app']);
  assert.deepEqual(app.resource, resource);
});

test('push mode: both logs reach the collector, nothing is written; a batch refused three times is dropped and counted', async () => {
  const pushed = await settings({ mode: 'otlp' });
  assert.equal(pushed.status, 200, pushed.text);
  assert.equal(pushed.json.mode, 'otlp');
  await fresh('out');
  await fresh('err');
  await call(`${data}/shop/orders/11`, { headers: { traceparent: TRACEPARENT } });
  t.gw.ctx.log.warn('said to the collector');
  const advance = (by: string) => call(`${control}/__clock/advance`, { method: 'POST', body: { by }, headers: root.headers });
  for (let i = 0; i < 100 && !otlp.logs.some((l) => l.body === 'said to the collector'); i++) {
    await t.gw.ctx.logs.shipper.settle();
    await advance('PT2S');
  }
  const access = otlp.logs.find((l) => l.attributes.type === 'access' && l.attributes.path === '/shop/orders/11');
  const app = otlp.logs.find((l) => l.body === 'said to the collector');
  assert.ok(access && app, JSON.stringify(otlp.logs.map((l) => l.body)));
  assert.equal(access.traceId, TRACE);
  assert.equal(access.resource['service.version'], VERSION);
  assert.equal(access.scope, 'meerkat.logs');
  assert.deepEqual([app.severityText, app.severityNumber], ['WARN', 13]);
  assert.ok(!otlp.logs.some((l) => l.resource['gateway.stream'] === 'audit' && l.scope === 'meerkat.logs'), 'its own queue, not the audit\'s');
  assert.deepEqual(await fresh('out'), [], 'nothing on standard output while pushing');

  otlp.refuseStatus = 400;
  await otlp.setMode('refuse');
  await call(`${data}/shop/orders/12`);
  for (let i = 0; i < 100 && (await root.get('/api/settings/logs')).json.dropped < 1; i++) {
    await t.gw.ctx.logs.shipper.settle();
    await advance('PT31S');
  }
  const dropped = await root.get('/api/settings/logs');
  assert.ok(dropped.json.dropped >= 1, dropped.text);
  assert.ok(dropped.json.droppedRecords.access >= 1, dropped.text);
  // The collector cannot say it is refusing: the push says so on standard error itself.
  assert.ok((await fresh('err')).some((l) => /log push: a batch refused three times was dropped/.test(l.msg)));
  await otlp.setMode('ok');
  assert.equal((await settings({ mode: 'startup' })).json.mode, 'startup');
});

test('a push the gateway cannot make is refused with its reason', async () => {
  const edition = await startTestGateway({ GATEWAY_EDITION: 'community' });
  const bare = await startTestGateway({ GATEWAY_EDITION: 'licensed' });
  try {
    const community = await (await signInAdmin(edition.url('control'))).put('/api/settings/logs', { mode: 'otlp' });
    assert.deepEqual([community.status, community.json.code], [403, 'licensed-edition']);
    const none = await (await signInAdmin(bare.url('control'))).put('/api/settings/logs', { mode: 'otlp' });
    assert.deepEqual([none.status, none.json.code, none.json.field], [409, 'logs.no-collector', 'mode']);
    const typo = await (await signInAdmin(bare.url('control'))).put('/api/settings/logs', { acessLog: true });
    assert.deepEqual([typo.status, typo.json.code, typo.json.field], [400, 'field.invalid', 'acessLog']);
    // Nothing to change is refused, as the scheduler's and the audit's settings refuse it.
    const empty = await (await signInAdmin(bare.url('control'))).put('/api/settings/logs', {});
    assert.deepEqual([empty.status, empty.json.code, empty.json.field], [400, 'field.invalid', 'level']);
  } finally {
    await edition.close();
    await bare.close();
  }
});

test('a node restarted into the community edition says it writes its startup format while otlp stays set', async () => {
  const db = await createTestDatabase();
  try {
    const licensed = await startTestGateway({ GATEWAY_EDITION: 'licensed', GATEWAY_OTLP_ENDPOINT: otlp.url }, db);
    try {
      const set = await (await signInAdmin(licensed.url('control'))).put('/api/settings/logs', { mode: 'otlp' });
      assert.deepEqual([set.status, set.json.mode, set.json.nodeMode], [200, 'otlp', 'otlp'], set.text);
    } finally {
      await licensed.close();
    }
    const community = await startTestGateway({ GATEWAY_EDITION: 'community' }, db);
    try {
      const read = await (await signInAdmin(community.url('control'))).get('/api/settings/logs');
      assert.deepEqual([read.status, read.json.mode, read.json.nodeMode], [200, 'otlp', 'startup'], read.text);
      assert.ok(community.logs.some((r) => /log push asked, but this node/.test(r.msg)), 'the node says once why it does not push');
    } finally {
      await community.close();
    }
  } finally {
    await db.drop();
  }
});
