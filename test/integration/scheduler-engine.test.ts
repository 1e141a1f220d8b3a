import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.ts';
import type { Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import type { Upstream, Received } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/jobs', {});
  await root.put('/api/roles/jobs-admin', { implies: ['jobs'] });
  await root.put('/api/roles/auditor', {});
  await root.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] }, endpointRules: [{ method: 'DELETE', path: '/billing/{id}', roles: ['auditor'] }] });
  await root.put('/api/vault/billing_key', { value: 'sk_test_123' });
  token = await schedulesToken(root, 'billing-svc', ['billing'], ['jobs-admin', 'auditor']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const advance = (by: string) => advanceClock(t.url('control'), by);

/** Waits (on real I/O, not on time) until the schedule's history holds `count` runs. */
async function runs(id: string, count: number): Promise<Array<Record<string, any>>> {
  for (let i = 0; i < 200; i++) {
    const r = (await internal('GET', `/api/schedules/${id}/runs`)).json as Array<Record<string, any>>;
    if (r.length >= count) return r;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`schedule ${id} did not reach ${count} run(s)`);
}

async function received(n: number): Promise<Received> {
  for (let i = 0; i < 200 && up.requests.length < n; i++) await new Promise((res) => setTimeout(res, 25));
  assert.ok(up.requests.length >= n, `upstream got ${up.requests.length} request(s), expected ${n}`);
  return up.requests[n - 1]!;
}

test('a turn fires through the front door: headers, identity, vault, body; it closes done and re-arms', async () => {
  up.handle(undefined);
  const before = up.requests.length;
  const s = (await internal('POST', '/api/schedules', {
    routeId: 'billing', path: '/billing/close?day=today', every: 'PT10M', roles: ['jobs-admin'],
    headers: { 'X-Api-Key': '${billing_key}', 'X-Typo': '$nokey' }, body: { day: 'today' },
  })).json;
  assert.ok(s.id, JSON.stringify(s));
  assert.equal(up.requests.length, before, 'nothing goes out before the turn');
  await advance('PT10M');
  const got = await received(before + 1);
  assert.equal(got.method, 'POST');
  assert.equal(got.url, '/svc/billing/close?day=today');
  assert.equal(got.headers['gateway-job'], s.id);
  assert.match(String(got.headers['gateway-job-run']), /^run_[0-9a-f]{24}$/);
  assert.equal(got.headers['gateway-job-attempt'], '1');
  assert.equal(got.headers['x-gateway-user'], 'scheduler');
  assert.equal(got.headers['x-gateway-roles'], 'jobs,jobs-admin');
  assert.equal(got.headers['x-api-key'], 'sk_test_123', 'the vault reference is resolved at call time');
  assert.equal(got.headers['x-typo'], '$nokey', 'an unknown name goes out verbatim');
  assert.equal(got.headers.authorization, undefined, 'no token on the wire');
  assert.equal(got.headers['content-type'], 'application/json');
  assert.equal(got.body, '{"day":"today"}');

  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'done');
  assert.equal(run!.status, 200);
  assert.equal(run!.runId, got.headers['gateway-job-run']);
  assert.equal(run!.attempt, 1);
  assert.match(run!.id, /^run-[0-9a-f]{24}$/);
  assert.equal(run!.scheduledFor, s.nextRunAt);
  const after = (await internal('GET', `/api/schedules/${s.id}`)).json;
  assert.equal(after.inFlight, null);
  assert.equal(after.lastRun.runId, run!.runId);
  assert.equal(after.nextRunAt, run!.endedAt + 600, 'every counts from the end of the last run');
  // The stored schedule still holds the reference, never the value.
  assert.equal(after.headers['X-Api-Key'], '${billing_key}');
  await internal('DELETE', `/api/schedules/${s.id}`);
});

test('failures are recorded in plain words: an error page cut to its sentence, a rule that refuses', async () => {
  up.handle((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><head><title>Server Error</title><style>p{}</style></head><body><h1>Oops</h1><p>The ledger is locked.</p></body></html>');
  });
  const failing = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/x', at: new Date(Date.now() + 3_600_000).toISOString(), roles: ['jobs'] })).json;
  await call(`${t.url('internal')}/api/schedules/${failing.id}/run`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const [run] = await runs(failing.id, 1);
  assert.equal(run!.state, 'failed');
  assert.equal(run!.status, 500);
  assert.equal(run!.detail, '500 Internal Server Error: Server Error Oops The ledger is locked.');
  assert.doesNotMatch(run!.detail, /doctype|<|\{\}/);

  // A role that does not reach the endpoint: accepted at write time, refused at each turn (403).
  up.handle(undefined);
  const before = up.requests.length;
  const refused = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/42', method: 'DELETE', every: 'PT1H', roles: ['jobs'] })).json;
  assert.ok(refused.id);
  await internal('POST', `/api/schedules/${refused.id}/run`);
  // 403 is tried again (roles may not be loaded yet): three attempts, 10 s then 60 s apart.
  await retryArmed(refused.id);
  await advance('PT10S');
  await retryArmed(refused.id);
  await advance('PT1M');
  const [r403] = await runs(refused.id, 1);
  assert.equal(r403!.attempt, 3);
  assert.equal(r403!.state, 'failed');
  assert.equal(r403!.status, 403);
  assert.match(r403!.detail, /^403 Forbidden: DELETE \/billing\/\{id\} needs one of the roles auditor\.$/);
  assert.equal(up.requests.length, before, 'the refused call never reached the service');
});

test('an accepted run (202) stays open; a report closes it; silence past the lease loses it', async () => {
  up.handle((_req, res) => { res.writeHead(202); res.end(); });
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/long', every: 'PT1H', roles: ['jobs'] })).json;
  await internal('POST', `/api/schedules/${s.id}/run`);
  let flight: Record<string, any> | null = null;
  for (let i = 0; i < 200 && flight?.phase !== 'accepted'; i++) {
    flight = (await internal('GET', `/api/schedules/${s.id}`)).json.inFlight;
    if (flight?.phase !== 'accepted') await new Promise((res) => setTimeout(res, 25));
  }
  assert.equal(flight?.phase, 'accepted');
  const conflict = await internal('POST', `/api/schedules/${s.id}/run`);
  assert.equal(conflict.status, 409);
  assert.equal(conflict.json.code, 'in-flight');
  const running = await internal('PATCH', `/api/schedules/${s.id}/run`, { run: flight!.runId, state: 'running', progress: 40 });
  assert.equal(running.status, 200, running.text);
  const done = await internal('PATCH', `/api/schedules/${s.id}/run`, { run: flight!.runId, state: 'done', detail: '1200 rows' });
  assert.equal(done.status, 200);
  assert.equal(done.json.inFlight, null);
  const [closed] = await runs(s.id, 1);
  assert.equal(closed!.state, 'done');
  assert.equal(closed!.detail, '1200 rows');

  // Again, then silence: five minutes later the run is lost and not sent again.
  const sent = up.requests.length;
  await internal('POST', `/api/schedules/${s.id}/run`);
  await received(sent + 1);
  for (let i = 0; i < 200; i++) {
    if ((await internal('GET', `/api/schedules/${s.id}`)).json.inFlight?.phase === 'accepted') break;
    await new Promise((res) => setTimeout(res, 25));
  }
  await advance('PT5M');
  const history = await runs(s.id, 2);
  assert.equal(history[0]!.state, 'lost');
  assert.equal(up.requests.length, sent + 1, 'a lost run is not sent again');
});

test('a turn that comes round later than catchUp is dropped, and nothing is sent', async () => {
  up.handle(undefined);
  const now = (await call(`${t.url('control')}/__clock`)).json.now as number;
  const before = up.requests.length;
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/once', at: new Date(now - 7_200_000).toISOString(), catchUp: 60, roles: ['jobs'] })).json;
  await advance('PT1M');
  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'dropped');
  assert.match(run!.detail, /past catchUp \(60 s\); nothing was sent/);
  assert.equal(up.requests.length, before);
  const after = (await internal('GET', `/api/schedules/${s.id}`)).json;
  assert.equal(after.finished, true, 'an at schedule is finished after its one turn');
  assert.equal(after.nextRunAt, null);
});

test('replay sends a failed turn again as a new run and the history names what it replays', async () => {
  up.handle((_req, res) => { res.writeHead(500); res.end('down'); });
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/replay', every: 'PT1H', roles: ['jobs'] })).json;
  await internal('POST', `/api/schedules/${s.id}/run`);
  const [failed] = await runs(s.id, 1);
  assert.equal(failed!.state, 'failed');
  up.handle(undefined);
  const replay = await internal('POST', `/api/schedules/${s.id}/run`, { replayOf: failed!.id });
  assert.equal(replay.status, 202, replay.text);
  const [again] = await runs(s.id, 2);
  assert.equal(again!.state, 'done');
  assert.equal(again!.ofRun, failed!.id);
  assert.equal(again!.cause, 'replay');
  assert.notEqual(again!.runId, failed!.runId);
});

/** Waits until the schedule has no run in flight (the outcome of the last call is recorded). */
async function settled(id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 200; i++) {
    const s = (await internal('GET', `/api/schedules/${id}`)).json;
    if (s.inFlight === null) return s;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`schedule ${id} stayed in flight`);
}

test('401/403/404/502/503/504 are tried again as new runs with growing waits; one history row links the attempts', async () => {
  let answers = [503, 502, 200];
  up.handle((_req, res) => { res.writeHead(answers.shift() ?? 200); res.end('busy'); });
  const sent = up.requests.length;
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/retry', every: 'PT1H', roles: ['jobs'] })).json;
  await internal('POST', `/api/schedules/${s.id}/run`);
  await received(sent + 1);
  let state = await settled(s.id);
  const t1 = (await call(`${t.url('control')}/__clock`)).json.now as number;
  assert.equal(state.nextRunAt, Math.floor((t1 + 10_000) / 1000), 'the second attempt waits 10 s');
  assert.deepEqual((await internal('GET', `/api/schedules/${s.id}/runs`)).json, [], 'the turn is not over yet');
  await advance('PT10S');
  await received(sent + 2);
  state = await settled(s.id);
  await advance('PT1M');
  await received(sent + 3);
  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'done');
  assert.equal(run!.attempt, 3);
  const attempts = run!.attempts as Array<Record<string, any>>;
  assert.deepEqual(attempts.map((a) => [a.attempt, a.status]), [[1, 503], [2, 502], [3, 200]]);
  const sentRuns = up.requests.slice(sent, sent + 3).map((r) => r.headers['gateway-job-run']);
  assert.deepEqual(attempts.map((a) => a.runId), sentRuns, 'each attempt is a new run with its own identifier');
  assert.equal(new Set(sentRuns).size, 3);
  assert.deepEqual(up.requests.slice(sent, sent + 3).map((r) => r.headers['gateway-job-attempt']), ['1', '2', '3']);

  // A 500 is not tried again; three 503s end the turn failed.
  answers = [503, 503, 503, 503];
  const failing = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/retry2', every: 'PT1H', roles: ['jobs'] })).json;
  const before = up.requests.length;
  await internal('POST', `/api/schedules/${failing.id}/run`);
  await received(before + 1);
  await settled(failing.id);
  await advance('PT10S');
  await received(before + 2);
  await settled(failing.id);
  await advance('PT1M');
  const [last] = await runs(failing.id, 1);
  assert.equal(last!.state, 'failed');
  assert.equal(last!.attempt, 3);
  assert.equal(up.requests.length, before + 3, 'three attempts at most');
});

test('424 defers the turn by Retry-After (clamped); the next turn points back; five in a row let it go', async () => {
  up.handle((_req, res) => { res.writeHead(424, { 'retry-after': '120', 'content-type': 'text/plain' }); res.end('the ledger export is not ready'); });
  const s = (await internal('POST', '/api/schedules', { routeId: 'billing', path: '/billing/defer', every: 'PT6H', roles: ['jobs'] })).json;
  await internal('POST', `/api/schedules/${s.id}/run`);
  const [first] = await runs(s.id, 1);
  assert.equal(first!.state, 'failed');
  assert.equal(first!.status, 424);
  assert.match(first!.detail, /the ledger export is not ready/);
  let state = (await internal('GET', `/api/schedules/${s.id}`)).json;
  assert.equal(state.deferrals, 1);
  assert.equal(state.nextRunAt, first!.endedAt + 120, 'the turn comes back after Retry-After');
  for (let n = 2; n <= 5; n++) {
    await advance('PT2M');
    const history = await runs(s.id, n);
    assert.equal(history[0]!.cause, 'deferred');
    assert.equal(history[0]!.ofRun, history[1]!.id, 'the following turn points back at the run that deferred it');
  }
  const history = await runs(s.id, 5);
  assert.match(history[0]!.detail, /5th deferral in a row: the turn is let go/);
  state = await settled(s.id);
  assert.equal(state.deferrals, 0);
  assert.equal(state.nextRunAt, history[0]!.endedAt + 6 * 3600, 'the schedule\'s own cadence takes over');
});

/** Waits until an attempt has ended and the next one is armed in the future (no call reached the service). */
async function retryArmed(id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const now = (await call(`${t.url('control')}/__clock`)).json.now as number;
    const s = (await internal('GET', `/api/schedules/${id}`)).json;
    if (s.inFlight === null && s.runRequested === null && s.nextRunAt * 1000 > now) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`schedule ${id}: no retry was armed`);
}
