/**
 * Scheduled calls go through the data plane's pipeline core, so its rules hold for them by
 * construction: the headers the gateway writes cannot be planted by a schedule (even one stored
 * before the write-time refusal), a path cannot climb out of its route, the writing token bounds
 * every call (revoked: the schedule stops and is kept), the `waiting` phase is shown, an answer is
 * read up to 64 KiB and no further, and a stopping node takes no turn while its doors drain.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import { startUpstream, type Received, type Upstream } from '../helpers/upstream.ts';
import { openStore } from '../../src/store/orm.ts';
import { Schedule } from '../../src/store/entities.ts';

type Json = Record<string, any>;

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/reader', { implies: [] });
  await root.put('/api/roles/ops', { implies: ['reader'] });
  await root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'], rule: { roles: ['reader'] }, identity: 'headers' });
  await root.put('/api/routes/admin', { upstream: `${up.origin}/admin`, paths: ['/admin'], rule: { roles: ['boss'] } });
  token = await schedulesToken(root, 'jobs-svc', ['jobs'], ['ops']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const pause = () => new Promise((res) => setTimeout(res, 25));

async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 300): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const got = await probe();
    if (got !== undefined) return got;
    await pause();
  }
  assert.fail(`timed out waiting for ${what}`);
}

const create = async (body: Json, via = internal): Promise<Json> => {
  const a = await via('POST', '/api/schedules', { routeId: 'jobs', roles: ['reader'], every: 'PT1H', path: '/jobs/nightly', ...body });
  assert.equal(a.status, 201, a.text);
  return a.json;
};
const get = async (id: string): Promise<Json> => (await root.get(`/api/schedules/${id}`)).json;
const runsOf = async (id: string): Promise<Json[]> => (await root.get(`/api/schedules/${id}/runs`)).json as Json[];
const lastRun = (id: string) => until(`a run of ${id}`, async () => (await runsOf(id))[0]);
/** Nothing in flight, and the next turn (a retry) lies ahead. */
const armed = (id: string) => until(`${id} armed`, async () => {
  const now = (await call(`${t.url('control')}/__clock`)).json.now as number;
  const x = await get(id);
  return x.inFlight === null && x.runRequested === null && x.nextRunAt !== null && x.nextRunAt * 1000 > now ? x : undefined;
});
const callsOf = (id: string): Received[] => up.requests.filter((r) => r.headers['gateway-job'] === id);

/** Writes columns of a stored schedule directly: rows from before a write-time rule existed. */
async function plant(id: string, columns: Partial<Pick<Schedule, 'headers' | 'path'>>): Promise<void> {
  const store = await openStore({ dataDir: t.db.dataDir, databaseUrl: t.db.databaseUrl });
  try {
    assert.equal(await store.em().nativeUpdate(Schedule, { id }, columns), 1);
  } finally {
    await store.close();
  }
}

test('headers the gateway writes are refused when written, and stripped at call time from a row that holds them', async () => {
  for (const name of ['X-Gateway-User', 'X-Gateway-Roles', 'Remote-User', 'X-Forwarded-For', 'Forwarded']) {
    const a = await internal('POST', '/api/schedules', { routeId: 'jobs', roles: ['reader'], every: 'PT1H', path: '/jobs/x', headers: { [name]: 'root' } });
    assert.equal(a.status, 400, a.text);
    assert.equal(a.json.code, 'schedule.header-forbidden');
  }
  const s = await create({ headers: { 'X-Trace': 'kept' } });
  await plant(s.id, {
    headers: {
      'X-Trace': 'kept', 'X-Gateway-User': 'root', 'x-gateway-roles': 'boss', 'Remote-User': 'root', 'X-Gateway-Identity': 'forged',
      'X-Forwarded-For': '10.0.0.1', Forwarded: 'for=10.0.0.1', 'Content-Length': '999', 'Gateway-Job-Run': 'forged', Authorization: 'Bearer x',
    },
  });
  assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
  const got = await until('the call', async () => callsOf(s.id)[0]);
  assert.equal(got.headers['x-gateway-user'], 'scheduler');
  assert.equal(got.headers['x-gateway-roles'], 'reader');
  assert.equal(got.headers['x-trace'], 'kept');
  for (const name of ['remote-user', 'x-gateway-identity', 'x-forwarded-for', 'forwarded', 'authorization']) {
    assert.equal(got.headers[name], undefined, `${name} reached the service`);
  }
  // Each header the gateway writes appears once on the wire, with the gateway's value.
  const raw = (name: string) => got.rawHeaders.filter((_, i) => i % 2 === 0 && got.rawHeaders[i]!.toLowerCase() === name).length;
  for (const name of ['x-gateway-user', 'x-gateway-roles', 'gateway-job', 'gateway-job-run', 'gateway-job-attempt', 'content-length']) {
    assert.ok(raw(name) <= 1, `${name} sent ${raw(name)} times`);
  }
  assert.match(String(got.headers['gateway-job-run']), /^run_/);
  assert.equal((await lastRun(s.id)).state, 'done');
});

test('a dot-segment path is refused when written, and a stored one calls nothing', async () => {
  for (const path of ['/jobs/../admin/secret', '/jobs/%2e%2e/admin', '/jobs/./x']) {
    const a = await internal('POST', '/api/schedules', { routeId: 'jobs', roles: ['reader'], every: 'PT1H', path });
    assert.equal(a.status, 400, a.text);
    assert.equal(a.json.code, 'schedule.path-invalid');
  }
  const s = await create({});
  await plant(s.id, { path: '/jobs/../admin/secret' });
  const before = up.requests.length;
  assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
  const run = await lastRun(s.id);
  assert.equal(run.state, 'failed');
  assert.equal(run.status, 400);
  assert.match(run.detail, /"\." or "\.\." segment/);
  assert.equal(up.requests.length, before, 'nothing reached the service');
});

test('roles taken out of the token\'s perimeter refuse the call (403 recorded), nothing is sent', async () => {
  const s = await create({});
  await root.put('/api/roles/ops', { implies: [] });
  // What the role asked for implies is the catalogue's: the run record names the role asked for.
  await root.put('/api/roles/ledger-keeper', {});
  await root.put('/api/roles/reader', { implies: ['ledger-keeper'] });
  try {
    assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
    // 403 is tried again (rule 16): three attempts, 10 s then 60 s apart.
    await armed(s.id);
    await advanceClock(t.url('control'), 'PT10S');
    await armed(s.id);
    await advanceClock(t.url('control'), 'PT61S');
    const run = await lastRun(s.id);
    assert.equal(run.state, 'failed');
    assert.equal(run.status, 403);
    assert.match(run.detail, /may no longer ask for "reader"\.$/);
    assert.doesNotMatch(run.detail, /ledger-keeper/);
    assert.equal(run.attempts.length, 3);
    assert.deepEqual(callsOf(s.id), []);
  } finally {
    await root.put('/api/roles/ops', { implies: ['reader'] });
    await root.put('/api/roles/reader', { implies: [] });
    await root.del('/api/roles/ledger-keeper');
  }
  await root.del(`/api/schedules/${s.id}`);
});

test('the waiting phase shows while the request is out and the answer has not begun', async () => {
  let hold: ServerResponse | undefined;
  up.handle((_req, res) => { hold = res; });
  try {
    const s = await create({});
    assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
    const waiting = await until('phase waiting', async () => {
      const f = (await get(s.id)).inFlight;
      return f?.phase === 'waiting' ? f : undefined;
    });
    assert.match(waiting.runId, /^run_/);
    assert.ok(hold, 'the service holds the request');
    hold.writeHead(204);
    hold.end();
    assert.equal((await lastRun(s.id)).state, 'done');
    assert.equal((await get(s.id)).inFlight, null);
  } finally {
    up.handle(undefined);
  }
});

test('an answer is read up to 64 KiB and no further: a service that never ends its body still closes the run', async () => {
  up.handle((_req, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.write('disk full. '.repeat(7000)); // 77 KB, and the answer never ends
  });
  try {
    const s = await create({ timeout: 'PT2M' });
    const started = Date.now();
    assert.equal((await root.post(`/api/schedules/${s.id}/run`, undefined)).status, 202);
    const run = await lastRun(s.id);
    assert.ok(Date.now() - started < 10_000, 'closed without waiting for the body timeout');
    assert.equal(run.state, 'failed');
    assert.equal(run.status, 500);
    assert.match(run.detail, /^500 Internal Server Error: disk full\./);
  } finally {
    up.handle(undefined);
  }
});

test('a revoked token\'s schedules stop, are kept and say why; root reads and deletes them', async () => {
  const minted = (await root.post('/api/tokens', { name: 'short-lived', kind: 'schedules', routes: ['jobs'], roles: ['ops'] })).json;
  const byShort = internalWith(() => t.url('internal'), () => minted.token);
  const s = await create({ every: 'PT1M' }, byShort);
  assert.notEqual(s.nextRunAt, null);
  assert.equal((await root.del(`/api/tokens/${minted.id}`)).status, 204);
  const stopped = await until('stopped', async () => {
    const x = await get(s.id);
    return x.stopped === 'token-revoked' ? x : undefined;
  });
  assert.equal(stopped.nextRunAt, null);
  await advanceClock(t.url('control'), 'PT5M');
  await pause();
  assert.deepEqual(callsOf(s.id), [], 'nothing fires after the revocation');
  assert.equal((await byShort('GET', `/api/schedules/${s.id}`)).status, 401);
  for (const action of ['resume', 'run']) {
    const a = await root.post(`/api/schedules/${s.id}/${action}`, undefined);
    assert.equal(a.status, 409, a.text);
    assert.equal(a.json.code, 'schedule.stopped');
  }
  assert.equal((await get(s.id)).id, s.id, 'kept');
  assert.equal((await root.del(`/api/schedules/${s.id}`)).status, 204);
  // The other token's schedules are untouched.
  const other = await create({});
  assert.equal((await get(other.id)).stopped, null);
});

test('a stopping node takes no turn while its doors drain; it hands over first', async () => {
  const t2 = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_DRAIN_TIMEOUT: '20' });
  const slow = await startUpstream();
  let hold: ServerResponse | undefined;
  slow.handle((req, res) => { if (req.url?.startsWith('/slow')) hold = res; else res.end('ok'); });
  let stopping: Promise<void> | undefined;
  try {
    const admin = await signInAdmin(t2.url('control'));
    await admin.put('/api/routes/slow', { upstream: slow.origin, paths: ['/slow'] });
    await admin.put('/api/routes/jobs', { upstream: slow.origin, paths: ['/jobs'] });
    const tok = (await admin.post('/api/tokens', { name: 'jobs', kind: 'schedules', routes: ['jobs'], roles: [] })).json.token;
    const created = await internalWith(() => t2.url('internal'), () => tok)('POST', '/api/schedules', { routeId: 'jobs', every: 'PT1M', path: '/jobs/tick' });
    assert.equal(created.status, 201, created.text);
    // A data-plane request in flight keeps the drain going.
    const inFlight = call(`${t2.url('data')}/slow/x`);
    await until('the slow request at the service', async () => hold);
    stopping = t2.gw.stop();
    await until('draining', async () => (t2.gw.ctx.draining() ? true : undefined));
    // Past the schedule's turn while the node drains.
    await t2.gw.ctx.advanceClock!(5 * 60_000);
    await pause();
    assert.deepEqual(slow.requests.filter((r) => r.url.startsWith('/jobs')), [], 'no turn was taken during the drain');
    hold!.end('done');
    assert.equal((await inFlight).status, 200);
    await stopping;
  } finally {
    hold?.end();
    await (stopping ?? t2.gw.stop());
    await t2.db.drop();
    await slow.close();
  }
});
