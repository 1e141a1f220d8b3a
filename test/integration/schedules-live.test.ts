/**
 * The scheduler live feed, `/api/schedules/live` on the control plane (docs/live.md): a real
 * gateway on the test clock, a real upstream, and undici's WebSocket as the client.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, signIn } from '../helpers/http.ts';
import { advanceClock, internalWith } from '../helpers/scheduler.ts';
import { rawRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { openLive, type LiveFeed } from '../helpers/live.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;
let control: string;

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  up = await startUpstream();
  control = t.url('control');
  root = await signInAdmin(control);
  await putOk(root, '/api/roles/jobs', {});
  await putOk(root, '/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  await putOk(root, '/api/routes/ledger', { upstream: `${up.origin}/svc`, paths: ['/ledger'], rule: { roles: ['jobs'] } });
  await putOk(root, '/api/organisations/acme', { name: 'Acme' });
  await putOk(root, '/api/organisations/globex', { name: 'Globex' });
  const minted = await root.post('/api/tokens', { name: 'billing-svc', kind: 'schedules', routes: ['*'], roles: ['jobs'], organisations: ['*'] });
  assert.equal(minted.status, 201, minted.text);
  token = minted.json.token;
});
after(async () => {
  await t?.close();
  await up?.close();
});

type Message = Record<string, any>;

const callInternal = internalWith(() => t.url('internal'), () => token);
const internal = async (method: string, path: string, body?: unknown) => {
  const a = await callInternal(method, path, body);
  assert.ok(a.status < 300, `${method} ${path}: ${a.status} ${a.text}`);
  return a.json;
};
const schedule = (extra: Record<string, unknown> = {}): Promise<Message> =>
  internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/close', every: 'PT1H', roles: ['jobs'], ...extra });
const advance = (by: string) => advanceClock(control, by);

type Feed = LiveFeed;

/** Opens the feed and waits for hello (or fails with the close, when the upgrade is refused). */
async function openFeed(query = '', headers: Record<string, string> = root.headers): Promise<Feed> {
  const feed = openLive(control, `/api/schedules/live${query}`, headers);
  await feed.next((m) => m.type === 'hello', 'hello');
  return feed;
}

const is = (type: string, scheduleId: string, more: (m: Message) => boolean = () => true) =>
  (m: Message) => m.type === type && (m.scheduleId ?? m.schedule?.id) === scheduleId && more(m);

/** An upgrade written by hand, to read the refusal's status and body (a WebSocket client hides them). */
function upgradeRaw(headers: Record<string, string> = {}, path = '/api/schedules/live') {
  const port = Number(new URL(control).port);
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
    + `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${lines}\r\n`);
}

function assertProblem(r: { status: number; head: string; body: string }, status: number, code: string): void {
  assert.equal(r.status, status, r.head);
  assert.match(r.head, /content-type: application\/problem\+json/i);
  assert.doesNotMatch(r.head, /sec-websocket-accept/i, 'no socket');
  assert.equal(JSON.parse(r.body).code, code);
}

test('refusals: anonymous, no capability, no Origin, unknown filter, a plain GET; an admin token opens it', async () => {
  assertProblem(await upgradeRaw(), 401, 'unauthenticated');
  const anonymous = new WebSocket(`${control.replace(/^http/, 'ws')}/api/schedules/live`);
  let opened = false;
  anonymous.addEventListener('open', () => { opened = true; });
  const code = await new Promise<number>((resolve) => anonymous.addEventListener('close', (e) => resolve(e.code)));
  assert.equal(opened, false);
  assert.equal(code, 1006, 'the handshake failed');

  const viewer = await root.post('/api/accounts', { name: 'viewer', password: 'viewer-password-1' });
  assert.equal(viewer.status, 201, viewer.text);
  const cookie = await signIn(control, 'viewer', 'viewer-password-1');
  assertProblem(await upgradeRaw({ cookie, origin: control }), 403, 'capability');
  await assert.rejects(openFeed('', { cookie, origin: control }), /closed \(1006/);

  const rootCookie = root.headers.cookie!;
  assertProblem(await upgradeRaw({ cookie: rootCookie }), 403, 'origin-mismatch');
  assertProblem(await upgradeRaw({ cookie: rootCookie, origin: 'http://evil.example' }), 403, 'origin-mismatch');
  assertProblem(await upgradeRaw({ cookie: rootCookie, origin: control }, '/api/schedules/live?tenants=acme'), 400, 'filter.invalid');

  const plain = await call(`${control}/api/schedules/live`, { headers: root.headers });
  assert.equal(plain.status, 426);
  assert.equal(plain.headers.upgrade, 'websocket');
  assert.equal(plain.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(plain.json.code, 'upgrade-required');
  assert.equal((await call(`${control}/api/schedules/live`)).status, 401);
  const doc = (await call(`${control}/api/openapi.json`)).json;
  assert.match(doc.paths['/api/schedules/live'].get.description, /run\.finished/);

  const admin = await root.post('/api/tokens', { name: 'root-script', kind: 'admin' });
  assert.equal(admin.status, 201, admin.text);
  const feed = await openFeed('', { authorization: `Bearer ${admin.json.token}` });
  assert.equal(feed.messages[0]!.type, 'hello');
  // Revoked while open: the next event closes the feed (1008) instead of reaching it.
  assert.equal((await root.del(`/api/tokens/${admin.json.id}`)).status, 204);
  const s = await schedule();
  const closed = await feed.closed;
  assert.equal(closed.code, 1008);
  assert.match(closed.reason, /^credentials no longer valid/);
  assert.equal(feed.messages.some((m) => m.type === 'schedule.changed'), false);
  await internal('DELETE', `/api/schedules/${s.id}`);

  // A quiet scheduler sends nothing: the credentials are asked again every 30 s all the same.
  const quiet = await root.post('/api/tokens', { name: 'quiet-script', kind: 'admin' });
  const idle = await openFeed('', { authorization: `Bearer ${quiet.json.token}` });
  assert.equal(idle.messages[0]!.type, 'hello');
  assert.equal((await root.del(`/api/tokens/${quiet.json.id}`)).status, 204);
  await advance('PT30S');
  const ended = await idle.closed;
  assert.equal(ended.code, 1008);
  assert.match(ended.reason, /^credentials no longer valid/);
});

test('the opening handshake is checked before anything else: another protocol or version, no Connection: Upgrade, a bad key, a body', async () => {
  const port = Number(new URL(control).port);
  const cookie = root.headers.cookie!;
  const handshake = (lines: Record<string, string>, body = '') => rawRequest(port, `GET /api/schedules/live HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`
    + Object.entries({ cookie, origin: control, ...lines }).map(([k, v]) => `${k}: ${v}\r\n`).join('') + `\r\n${body}`, 2000);
  const good = { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' };
  const h2c = await handshake({ ...good, upgrade: 'h2c' });
  assertProblem(h2c, 426, 'upgrade-required');
  assert.match(h2c.head, /^upgrade: websocket$/im);
  const v8 = await handshake({ ...good, 'sec-websocket-version': '8' });
  assertProblem(v8, 426, 'upgrade-required');
  assert.match(v8.head, /^sec-websocket-version: 13$/im, 'the version spoken here');
  assertProblem(await handshake({ ...good, connection: 'keep-alive' }), 400, 'websocket.handshake');
  const { connection: _c, ...noConnection } = good;
  assertProblem(await handshake(noConnection), 400, 'websocket.handshake');
  // A key that is not 24 characters: the plain door's server does not take it for an upgrade at
  // all, so it is the plain request's 426; the HTTPS doors' server hands it over, and it is a 400.
  const badKey = await handshake({ ...good, 'sec-websocket-key': 'abc' });
  assert.ok(badKey.status === 426 || badKey.status === 400, badKey.head);
  assert.doesNotMatch(badKey.head, /sec-websocket-accept/i);
  assertProblem(await handshake({ ...good, 'content-length': '5' }, 'hello'), 400, 'websocket.handshake');
  // The same request, well formed, opens the feed.
  const feed = await openFeed();
  feed.close();
});

test('root sees hello, schedule changes, a turn starting and finishing, and a delete', async () => {
  up.handle(undefined);
  const s1 = await schedule({ every: 'PT10M', path: '/billing/close?day=today' });
  const feed = await openFeed();
  const hello = feed.messages[0]!;
  assert.equal(typeof hello.node, 'string');
  assert.equal(typeof hello.at, 'number');
  const listed = (await root.get('/api/schedules')).json;
  assert.deepEqual(hello.schedules, listed, 'hello holds the schedules as GET /api/schedules lists them');
  assert.ok(hello.schedules.some((x: Message) => x.id === s1.id));

  // On PostgreSQL events travel through the database, so the creation's own event may still
  // arrive after hello: a client applies events idempotently, and this test waits by content.
  await root.post(`/api/schedules/${s1.id}/pause`, undefined);
  await feed.next(is('schedule.changed', s1.id, (m) => m.schedule.paused === true), 'pause');
  await root.post(`/api/schedules/${s1.id}/resume`, undefined);
  await feed.next(is('schedule.changed', s1.id, (m) => m.schedule.paused === false), 'resume');
  const s2 = await schedule({ organisation: 'acme' });
  const created = await feed.next(is('schedule.changed', s2.id), 'creation');
  assert.equal(created.schedule.organisation, 'acme');

  await advance('PT10M');
  const started = await feed.next(is('run.started', s1.id), 'run.started');
  assert.equal(started.phase, 'calling');
  assert.equal(started.attempt, 1);
  assert.equal(started.node, hello.node);
  assert.equal(started.scheduledFor, s1.nextRunAt);
  const finished = await feed.next(is('run.finished', s1.id), 'run.finished');
  const got = up.requests.find((r) => r.headers['gateway-job'] === s1.id);
  assert.ok(got, 'the upstream received the call');
  assert.equal(finished.run.state, 'done');
  assert.equal(finished.run.status, 200);
  assert.equal(finished.run.runId, got.headers['gateway-job-run']);
  assert.equal(started.runId, finished.run.runId);
  assert.equal(typeof finished.nextRunAt, 'number');

  assert.equal((await root.del(`/api/schedules/${s1.id}`)).status, 204);
  assert.deepEqual(await feed.next(is('schedule.deleted', s1.id), 'schedule.deleted'), { type: 'schedule.deleted', scheduleId: s1.id });
  await internal('DELETE', `/api/schedules/${s2.id}`);
  await feed.close();
});

test('an accepted run (202) advances, then a progress report advances it again, then it finishes', async () => {
  up.handle((_req, res) => { res.writeHead(202); res.end(); });
  const s = await schedule({ path: '/billing/long' });
  const feed = await openFeed();
  assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
  const started = await feed.next(is('run.started', s.id), 'run.started');
  // The waiting phase (request sent, answer not begun) may come first when the answer is slow.
  const accepted = await feed.next(is('run.advanced', s.id, (m) => m.phase === 'accepted'), 'run.advanced (accepted)');
  assert.equal(accepted.phase, 'accepted');
  assert.equal(accepted.runId, started.runId);
  assert.equal(accepted.progress ?? null, null);

  await internal('PATCH', `/api/schedules/${s.id}/run`, { run: started.runId, state: 'running', progress: 40, detail: 'half-way' });
  const progress = await feed.next(is('run.advanced', s.id), 'run.advanced (progress)');
  assert.equal(progress.phase, 'accepted');
  assert.equal(progress.progress, 40);
  assert.equal(progress.detail, 'half-way');
  assert.equal(progress.runId, started.runId);

  await internal('PATCH', `/api/schedules/${s.id}/run`, { run: started.runId, state: 'done', detail: '1200 rows' });
  const finished = await feed.next(is('run.finished', s.id), 'run.finished');
  assert.equal(finished.run.state, 'done');
  assert.equal(finished.run.detail, '1200 rows');
  up.handle(undefined);
  await internal('DELETE', `/api/schedules/${s.id}`);
  await feed.close();
});

test('organisation and routeId filters hide other schedules, in hello and in every event', async () => {
  up.handle(undefined);
  const earlier = await schedule({ organisation: 'globex' });
  const all = await openFeed();
  const acme = await openFeed('?organisation=acme');
  const ledger = await openFeed('?route=ledger'); // the name GET /api/schedules uses
  assert.ok(all.messages[0]!.schedules.some((x: Message) => x.id === earlier.id));
  assert.deepEqual(acme.messages[0]!.schedules.filter((x: Message) => x.organisation !== 'acme'), []);
  assert.deepEqual(ledger.messages[0]!.schedules, []);

  const g = await schedule({ organisation: 'globex' });
  await root.post(`/api/schedules/${g.id}/pause`, undefined);
  await root.post(`/api/schedules/${g.id}/resume`, undefined);
  await root.post(`/api/schedules/${g.id}/run`, undefined);
  await all.next(is('run.finished', g.id), 'globex run.finished');
  await root.post(`/api/schedules/${earlier.id}/run`, undefined);
  await all.next(is('run.finished', earlier.id), 'earlier globex run.finished');

  const a = await schedule({ organisation: 'acme' });
  await acme.next(is('schedule.changed', a.id), 'acme creation');
  await root.post(`/api/schedules/${a.id}/run`, undefined);
  await acme.next(is('run.started', a.id), 'acme run.started');
  await acme.next(is('run.finished', a.id), 'acme run.finished');
  await root.del(`/api/schedules/${a.id}`);
  await acme.next(is('schedule.deleted', a.id), 'acme schedule.deleted');
  const shown = new Set(acme.messages.slice(1).map((m) => m.scheduleId ?? m.schedule?.id));
  assert.deepEqual([...shown], [a.id], 'the acme feed carried acme\'s schedule only');
  assert.ok(all.messages.some((m) => m.type === 'run.started' && m.scheduleId === g.id), 'the unfiltered feed saw globex');

  // The route filter: the first ledger event is the first thing that feed receives after hello.
  const l = await schedule({ routeId: 'ledger', path: '/ledger/post' });
  await ledger.next(is('schedule.changed', l.id), 'ledger creation');
  assert.deepEqual(ledger.messages.map((m) => m.type), ['hello', 'schedule.changed']);

  for (const s of [earlier, g, l]) await internal('DELETE', `/api/schedules/${s.id}`);
  await Promise.all([all.close(), acme.close(), ledger.close()]);
});

test('a stopping gateway closes its feeds with 1001', async () => {
  const feed = await openFeed();
  await t.gw.stop();
  const closed = await feed.closed;
  assert.equal(closed.code, 1001);
  assert.match(closed.reason, /stopping/);
});
