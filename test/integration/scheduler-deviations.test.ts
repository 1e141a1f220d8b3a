/**
 * Where the engine strayed from spec 1.1 and table 3.1: a report that reaches the gateway before
 * the 202 it goes with (rule 13), the vault scope of an organisation's schedule (rule 27), and a
 * retry or deferral owed when the turn may no longer go out (rules 16, 17, 24) or when pause,
 * replace and run now take over.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import { startUpstream, type Upstream, type Received } from '../helpers/upstream.ts';

type Json = Record<string, any>;

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'] });
  await root.put('/api/organisations/acme', { name: 'Acme' });
  token = await schedulesToken(root, 'jobs-svc', ['jobs'], [], ['acme']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const advance = (by: string) => advanceClock(t.url('control'), by);
const pause = () => new Promise((res) => setTimeout(res, 25));

/** The run records of an answer (a JSON array). */
const recordsOf = (a: Answer): Json[] => a.json as Json[];

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const got = await probe();
    if (got !== undefined) return got;
    await pause();
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** The schedule's history once it holds `count` records, newest first. */
const runs = (id: string, count: number, via = internal) => until(`${count} run(s) of ${id}`, async () => {
  const r = recordsOf(await via('GET', `/api/schedules/${id}/runs`));
  return r.length >= count ? r : undefined;
});

const schedule = async (id: string, via = internal): Promise<Json> => (await via('GET', `/api/schedules/${id}`)).json;

/** Waits until nothing is in flight and the next turn (a retry, a deferral) lies ahead. */
const armed = (id: string, via = internal, control = () => t.url('control')) => until(`${id} armed`, async () => {
  const now = (await call(`${control()}/__clock`)).json.now as number;
  const s = await schedule(id, via);
  return s.inFlight === null && s.runRequested === null && s.nextRunAt !== null && s.nextRunAt * 1000 > now ? s : undefined;
});

const receivedAt = (n: number, service = up): Promise<Received> =>
  until(`${n} request(s) at the service`, async () => service.requests[n - 1]);

const create = async (body: Json, via = internal): Promise<Json> => {
  const a = await via('POST', '/api/schedules', { routeId: 'jobs', roles: [], ...body });
  assert.equal(a.status, 201, a.text);
  return a.json;
};

const runNow = async (id: string, via = internal): Promise<void> => {
  const a = await via('POST', `/api/schedules/${id}/run`);
  assert.equal(a.status, 202, a.text);
};

/** A service that reports on its run from inside its request handler, then answers. */
function reportingService(report: (r: Received) => Json, status: number, patches: Answer[]) {
  up.handle(async (_req, res, r) => {
    const id = String(r.headers['gateway-job']);
    patches.push(await internal('PATCH', `/api/schedules/${id}/run`, { run: r.headers['gateway-job-run'], ...report(r) }));
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(status === 202 ? '' : 'answered after the report');
  });
}

test('a report sent from inside the request handler, before the 202, closes the run as reported', async () => {
  const patches: Answer[] = [];
  reportingService(() => ({ state: 'done', detail: '42 rows' }), 202, patches);
  const sent = up.requests.length;
  const s = await create({ path: '/jobs/fast', every: 'PT1H' });
  await runNow(s.id);
  const [run] = await runs(s.id, 1);
  assert.equal(patches.length, 1);
  assert.equal(patches[0]!.status, 200, patches[0]!.text);
  assert.equal(run!.state, 'done');
  assert.equal(run!.detail, '42 rows');
  assert.equal(run!.runId, up.requests[sent]!.headers['gateway-job-run']);
  // The 202 that follows neither reopens the run nor leaves a lease to lose it.
  await until('the 202 written', async () => ((await schedule(s.id)).inFlight === null ? true : undefined));
  await advance('PT6M');
  const history = recordsOf(await internal('GET', `/api/schedules/${s.id}/runs`));
  assert.deepEqual(history.map((h) => h.state), ['done']);

  // failed, the same way.
  patches.length = 0;
  reportingService(() => ({ state: 'failed', detail: 'ledger locked' }), 202, patches);
  const f = await create({ path: '/jobs/fast-fail', every: 'PT1H' });
  await runNow(f.id);
  const [failed] = await runs(f.id, 1);
  assert.equal(patches[0]!.status, 200, patches[0]!.text);
  assert.equal(failed!.state, 'failed');
  assert.equal(failed!.detail, 'ledger locked');
  await internal('DELETE', `/api/schedules/${s.id}`);
  await internal('DELETE', `/api/schedules/${f.id}`);
});

test('an early running report accepts the run; the 202 after it changes nothing; a later report closes it', async () => {
  const patches: Answer[] = [];
  reportingService(() => ({ state: 'running', progress: 10, detail: 'started' }), 202, patches);
  const s = await create({ path: '/jobs/long', every: 'PT1H' });
  await runNow(s.id);
  await until('the early report', async () => (patches.length === 1 ? true : undefined));
  assert.equal(patches[0]!.status, 200, patches[0]!.text);
  assert.equal(patches[0]!.json.inFlight.phase, 'accepted');
  const runId = patches[0]!.json.inFlight.runId as string;
  // Four minutes on, the lease the report renewed still holds, 202 or not.
  await advance('PT4M');
  const open = await schedule(s.id);
  assert.equal(open.inFlight?.phase, 'accepted');
  const done = await internal('PATCH', `/api/schedules/${s.id}/run`, { run: runId, state: 'done', detail: 'all rows' });
  assert.equal(done.status, 200, done.text);
  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'done');
  assert.equal(run!.detail, 'all rows');
  await internal('DELETE', `/api/schedules/${s.id}`);
});

test('a non-202 answer after an early running report closes the run on that answer, never tried again', async () => {
  const patches: Answer[] = [];
  reportingService(() => ({ state: 'running' }), 503, patches);
  const sent = up.requests.length;
  const s = await create({ path: '/jobs/busy', every: 'PT1H' });
  await runNow(s.id);
  const [run] = await runs(s.id, 1);
  assert.equal(patches[0]!.status, 200, patches[0]!.text);
  assert.equal(run!.state, 'failed');
  assert.equal(run!.status, 503);
  assert.match(run!.detail, /^503 Service Unavailable: answered after the report \(the service had reported this run running, so it is not tried again\.\)$/);
  await advance('PT2M');
  assert.equal(up.requests.length, sent + 1, 'no second attempt');

  reportingService(() => ({ state: 'running' }), 200, patches);
  const ok = await create({ path: '/jobs/sync', every: 'PT1H' });
  await runNow(ok.id);
  const [done] = await runs(ok.id, 1);
  assert.equal(patches[1]!.status, 200, patches[1]!.text);
  assert.equal(done!.state, 'done');
  assert.equal(done!.status, 200);
  await internal('DELETE', `/api/schedules/${s.id}`);
  await internal('DELETE', `/api/schedules/${ok.id}`);
});

test('an organisation\'s schedule resolves vault references in that organisation\'s scope only', async () => {
  up.handle(undefined);
  await root.put('/api/vault/api_key', { value: 'app-value' });
  await root.put('/api/vault/app_only', { value: 'app-only-value' });
  await root.put('/api/organisations/acme/vault/api_key', { value: 'acme-value' });
  const headers = { 'X-Key': '${api_key}', 'X-Other': '$app_only' };
  const org = await create({ path: '/jobs/org', every: 'PT1H', organisation: 'acme', headers });
  const app = await create({ path: '/jobs/app', every: 'PT1H', headers });
  const sent = up.requests.length;
  await runNow(org.id);
  const fromOrg = await receivedAt(sent + 1);
  await runs(org.id, 1);
  await runNow(app.id);
  const fromApp = await receivedAt(sent + 2);
  assert.equal(fromOrg.url, '/svc/jobs/org');
  assert.equal(fromOrg.headers['x-key'], 'acme-value', 'the organisation\'s value');
  assert.equal(fromOrg.headers['x-other'], '$app_only', 'a name only the application has goes out verbatim');
  assert.equal(fromApp.url, '/svc/jobs/app');
  assert.equal(fromApp.headers['x-key'], 'app-value', 'no organisation: the application\'s value');
  assert.equal(fromApp.headers['x-other'], 'app-only-value');
  await runs(app.id, 1);
  await internal('DELETE', `/api/schedules/${app.id}`);
  // While a schedule may still act for the organisation (with its vault), it is not deleted: were
  // its id taken again, the schedule would act for the new one.
  const inUse = await root.del('/api/organisations/acme');
  assert.equal(inUse.status, 409, inUse.text);
  assert.equal(inUse.json.code, 'organisation.in-use');
  assert.match(inUse.json.detail, new RegExp(`schedules that act for it: ${org.id}; delete them first`));
  assert.equal((await internal('POST', `/api/schedules/${org.id}/pause`)).status, 200);
  assert.equal((await root.del('/api/organisations/acme')).status, 409, 'a paused schedule may resume');
  await internal('DELETE', `/api/schedules/${org.id}`);
  // Deleted, it leaves the perimeter of the token that named it: an organisation made later under
  // the same id is not reached by a token minted for the one that went.
  const deleted = await root.del('/api/organisations/acme');
  assert.equal(deleted.status, 204, deleted.text);
  const mine = (await root.get('/api/tokens')).json.tokens.find((x: Json) => x.name === 'jobs-svc');
  assert.deepEqual(mine.organisations, []);
  await root.put('/api/organisations/acme', { name: 'Acme, another tenant' });
  await root.put('/api/organisations/acme/vault/api_key', { value: 'new-tenant-value' });
  const refused = await internal('POST', '/api/schedules', { routeId: 'jobs', roles: [], path: '/jobs/org', every: 'PT1H', organisation: 'acme', headers });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.code, 'perimeter');
  const line = (await root.get('/api/audit?kind=organisation.delete')).json.events[0];
  assert.match(line.detail, /deleted, with its 1 vault entry, taken out of the perimeter of the token "jobs-svc"/);
});

test('a deleted route leaves the perimeter of the tokens that named it; one made again under its id is not theirs', async () => {
  await root.put('/api/routes/reports', { upstream: `${up.origin}/svc`, paths: ['/reports'] });
  const both = await schedulesToken(root, 'reports-svc', ['jobs', 'reports'], []);
  const star = await schedulesToken(root, 'every-route', ['*'], []);
  const deleted = await root.del('/api/routes/reports');
  assert.equal(deleted.status, 204, deleted.text);
  const tokens = (await root.get('/api/tokens')).json.tokens as Json[];
  assert.deepEqual(tokens.find((x) => x.name === 'reports-svc')!.routes, ['jobs']);
  assert.deepEqual(tokens.find((x) => x.name === 'every-route')!.routes, ['*'], '* stays *');
  assert.equal(tokens.find((x) => x.name === 'jobs-svc')!.routes.length, 1, 'a token that did not name it is unchanged');
  const line = (await root.get('/api/audit?kind=route.delete')).json.events[0];
  assert.match(line.detail, /taken out of the perimeter of the token "reports-svc"/);

  await root.put('/api/routes/reports', { upstream: `${up.origin}/elsewhere`, paths: ['/reports'] });
  const viaBoth = internalWith(() => t.url('internal'), () => both);
  const refused = await viaBoth('POST', '/api/schedules', { routeId: 'reports', roles: [], path: '/reports/daily', every: 'PT1H' });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.json.code, 'perimeter');
  const made = await create({ path: '/reports/daily', every: 'PT1H', routeId: 'reports' }, internalWith(() => t.url('internal'), () => star));
  await internalWith(() => t.url('internal'), () => star)('DELETE', `/api/schedules/${made.id}`);
  await root.del('/api/routes/reports');
});

test('a token learns nothing of routes and organisations outside its perimeter (spec 5 rule 2)', async () => {
  await root.put('/api/routes/jobs-admin', { upstream: `${up.origin}/svc`, paths: ['/jobs/admin'] });
  await root.put('/api/organisations/beta', { name: 'Beta' });
  const post = (body: Json) => internal('POST', '/api/schedules', { roles: [], every: 'PT1H', ...body });
  const refusedAlike = async (field: string, known: Json, unknown: Json) => {
    const a = await post(known);
    const b = await post(unknown);
    for (const r of [a, b]) {
      assert.equal(r.status, 403, r.text);
      assert.equal(r.json.code, 'perimeter');
      assert.equal(r.json.field, field);
    }
  };
  await refusedAlike('routeId', { routeId: 'jobs-admin', path: '/jobs/admin/x' }, { routeId: 'no-such-route', path: '/jobs/admin/x' });
  await refusedAlike('organisation', { routeId: 'jobs', path: '/jobs/x', organisation: 'beta' }, { routeId: 'jobs', path: '/jobs/x', organisation: 'no-such-org' });
  const path = await post({ routeId: 'jobs', path: '/jobs/admin/x' });
  assert.equal(path.status, 400, path.text);
  assert.equal(path.json.code, 'schedule.path-invalid');
  assert.doesNotMatch(path.json.detail, /jobs-admin/);
  assert.match(path.json.detail, /another route serves it/);
  // A token that reaches every route and organisation is told which do not exist.
  const wide = await schedulesToken(root, 'wide', ['*'], [], ['*']);
  const viaWide = (body: Json) => internalWith(() => t.url('internal'), () => wide)('POST', '/api/schedules', { roles: [], every: 'PT1H', ...body });
  assert.equal((await viaWide({ routeId: 'no-such-route', path: '/x' })).json.code, 'schedule.route-unknown');
  assert.equal((await viaWide({ routeId: 'jobs', path: '/jobs/x', organisation: 'no-such-org' })).json.code, 'organisation.unknown');
  assert.match((await viaWide({ routeId: 'jobs', path: '/jobs/admin/x' })).json.detail, /the route "jobs-admin" serves it/);
  await root.del('/api/routes/jobs-admin');
  await root.del('/api/organisations/beta');
});

/** A schedule whose first call answered `status` and whose retry or deferral is now owed. */
async function owing(path: string, status: number, extra: Json = {}): Promise<Json> {
  up.handle((_req, res) => { res.writeHead(status, status === 424 ? { 'retry-after': '120' } : {}); res.end('not now'); });
  const s = await create({ path, every: 'PT1H', ...extra });
  await runNow(s.id);
  await armed(s.id);
  up.handle(undefined);
  return s;
}

test('pause during a retry wait ends the turn failed with a sentence; resume arms the cadence, attempt 1', async () => {
  const sent = up.requests.length;
  const s = await owing('/jobs/pause-retry', 503);
  const paused = await internal('POST', `/api/schedules/${s.id}/pause`);
  assert.equal(paused.status, 200, paused.text);
  assert.equal(paused.json.nextRunAt, null);
  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'failed');
  assert.equal(run!.status, 503);
  assert.equal(run!.attempt, 1);
  assert.equal(run!.runId, up.requests[sent]!.headers['gateway-job-run']);
  assert.match(run!.detail, /Attempt 2 was not sent: the schedule was paused\.$/);
  // The row is the attempt that went out: it has its start (spec 2.2), not null.
  assert.equal(typeof run!.startedAt, 'number');
  assert.ok(run!.startedAt <= run!.endedAt && run!.startedAt >= run!.scheduledFor, JSON.stringify(run));
  const resumed = (await internal('POST', `/api/schedules/${s.id}/resume`)).json;
  assert.equal(resumed.nextRunAt, run!.endedAt + 3600, 'the cadence governs');
  await advance('PT10S');
  await pause();
  assert.equal(up.requests.length, sent + 1, 'the retry is not sent');
  await advance('PT1H');
  const next = await receivedAt(sent + 2);
  assert.equal(next.headers['gateway-job-attempt'], '1');
  const [fresh] = await runs(s.id, 2);
  assert.equal(fresh!.state, 'done');
  assert.equal(fresh!.attempts, undefined, 'a new turn, not the old one\'s attempts');
  await internal('DELETE', `/api/schedules/${s.id}`);
});

test('PUT during a retry wait ends the turn failed; the new cadence governs', async () => {
  const sent = up.requests.length;
  const s = await owing('/jobs/put-retry', 502);
  const put = await internal('PUT', `/api/schedules/${s.id}`, { routeId: 'jobs', path: '/jobs/put-retry', every: 'PT2H', roles: [] });
  assert.equal(put.status, 200, put.text);
  const [run] = await runs(s.id, 1);
  assert.equal(run!.state, 'failed');
  assert.equal(run!.status, 502);
  assert.match(run!.detail, /Attempt 2 was not sent: the schedule was replaced\.$/);
  assert.equal(put.json.nextRunAt, run!.endedAt + 7200);
  await advance('PT1H');
  await pause();
  assert.equal(up.requests.length, sent + 1);
  await advance('PT1H');
  assert.equal((await receivedAt(sent + 2)).headers['gateway-job-attempt'], '1');
  await runs(s.id, 2);
  await internal('DELETE', `/api/schedules/${s.id}`);
});

test('run now during a retry or deferral wait ends that turn in the history and goes out as attempt 1', async () => {
  const sent = up.requests.length;
  const s = await owing('/jobs/run-retry', 504);
  await runNow(s.id);
  const [now, ended] = await runs(s.id, 2);
  assert.equal(ended!.state, 'failed');
  assert.equal(ended!.status, 504);
  assert.match(ended!.detail, /Attempt 2 was not sent: run now took its place\.$/);
  assert.equal(now!.state, 'done');
  assert.equal(now!.attempt, 1);
  assert.equal(now!.attempts, undefined);
  assert.equal(up.requests[sent + 1]!.headers['gateway-job-attempt'], '1');
  await internal('DELETE', `/api/schedules/${s.id}`);

  const d = await owing('/jobs/run-deferral', 424);
  assert.equal((await schedule(d.id)).deferrals, 1);
  await runNow(d.id);
  const [ran, dropped, deferring] = await runs(d.id, 3);
  assert.equal(deferring!.status, 424);
  assert.equal(dropped!.state, 'dropped');
  assert.equal(dropped!.cause, 'deferred');
  assert.equal(dropped!.ofRun, deferring!.id);
  assert.match(dropped!.detail, /let go: run now took its place; nothing was sent\.$/);
  assert.equal(ran!.state, 'done');
  assert.equal(ran!.cause, undefined);
  assert.equal((await schedule(d.id)).deferrals, 0);
  await internal('DELETE', `/api/schedules/${d.id}`);
});

test('pause drops a deferred turn; an answer reaching a paused schedule is neither retried nor put off', async () => {
  const d = await owing('/jobs/pause-deferral', 424);
  const paused = (await internal('POST', `/api/schedules/${d.id}/pause`)).json;
  assert.equal(paused.deferrals, 0);
  const [dropped, deferring] = await runs(d.id, 2);
  assert.equal(dropped!.state, 'dropped');
  assert.equal(dropped!.ofRun, deferring!.id);
  assert.match(dropped!.detail, /let go: the schedule was paused; nothing was sent\.$/);
  await internal('DELETE', `/api/schedules/${d.id}`);

  // Paused while its call is out: the answer closes the run and arms nothing.
  for (const [status, sentence] of [[503, /\(the schedule is paused, so it is not tried again\.\)$/], [424, /The schedule is paused: the turn is not put off\.$/]] as const) {
    const held: Array<() => void> = [];
    up.handle((_req, res) => { held.push(() => { res.writeHead(status); res.end('later'); }); });
    const s = await create({ path: `/jobs/paused-${status}`, every: 'PT1H' });
    const sent = up.requests.length;
    await runNow(s.id);
    await receivedAt(sent + 1);
    assert.equal((await internal('POST', `/api/schedules/${s.id}/pause`)).status, 200);
    held.shift()!();
    const [run] = await runs(s.id, 1);
    assert.equal(run!.status, status);
    assert.match(run!.detail, sentence);
    const after = await schedule(s.id);
    assert.equal(after.deferrals, 0);
    assert.equal(after.nextRunAt, null);
    up.handle(undefined);
    const resumed = (await internal('POST', `/api/schedules/${s.id}/resume`)).json;
    assert.equal(resumed.nextRunAt, run!.endedAt + 3600);
    await advance('PT2M');
    await pause();
    assert.equal(up.requests.length, sent + 1, 'nothing was owed');
    await internal('DELETE', `/api/schedules/${s.id}`);
  }
});

test('a retry or deferral that comes round later than catchUp is not sent', async () => {
  // One call in flight at most: a held call keeps the owed turns waiting past catchUp.
  const g = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_SCHEDULER_SHARDS: '1', GATEWAY_SCHEDULER_MAX_CALLS: '1' });
  const held: Array<() => void> = [];
  let answer = 503;
  const svc = await startUpstream((req, res) => {
    if (req.url?.includes('block')) held.push(() => { res.writeHead(200); res.end('ok'); });
    else { res.writeHead(answer, answer === 424 ? { 'retry-after': '60' } : {}); res.end('not now'); }
  });
  try {
    const admin = await signInAdmin(g.url('control'));
    await admin.put('/api/routes/jobs', { upstream: svc.origin, paths: ['/jobs'] });
    const key = (await admin.post('/api/tokens', { name: 'svc', kind: 'schedules', routes: ['jobs'], roles: [] })).json.token as string;
    const via = internalWith(() => g.url('internal'), () => key);
    const control = () => g.url('control');
    const blocker = await create({ path: '/jobs/block', every: 'PT1H' }, via);
    /** Holds the only call slot while the clock moves `by`, then lets it go. */
    const busyFor = async (by: string) => {
      const n = svc.requests.length;
      await runNow(blocker.id, via);
      await receivedAt(n + 1, svc);
      await advanceClock(control(), by);
      held.shift()!();
    };

    const r = await create({ path: '/jobs/retry', every: 'PT1H', catchUp: 60 }, via);
    await runNow(r.id, via);
    await armed(r.id, via, control);
    await busyFor('PT2M');
    const [late] = await runs(r.id, 1, via);
    assert.equal(late!.state, 'failed');
    assert.equal(late!.status, 503);
    assert.match(late!.detail, /Attempt 2 was not sent: it came round \d+ s late, past catchUp \(60 s\)\.$/);
    assert.equal(svc.requests.filter((q) => q.url === '/jobs/retry').length, 1, 'the retry never went out');

    answer = 424;
    const d = await create({ path: '/jobs/deferral', every: 'PT6H', catchUp: 60 }, via);
    await runNow(d.id, via);
    await armed(d.id, via, control);
    await busyFor('PT3M');
    const [dropped, deferring] = await runs(d.id, 2, via);
    assert.equal(deferring!.status, 424);
    assert.equal(dropped!.state, 'dropped');
    assert.equal(dropped!.cause, 'deferred');
    assert.equal(dropped!.ofRun, deferring!.id);
    assert.match(dropped!.detail, /let go: it came round \d+ s late, past catchUp \(60 s\); nothing was sent\.$/);
    assert.equal(svc.requests.filter((q) => q.url === '/jobs/deferral').length, 1, 'the deferred turn never went out');
    const after = await schedule(d.id, via);
    assert.equal(after.deferrals, 0);
    assert.equal(after.nextRunAt, dropped!.endedAt + 6 * 3600, 'the cadence goes on');
  } finally {
    for (const release of held.splice(0)) release();
    await g.close();
    await svc.close();
  }
});

test('a test clock moved past a lease while this gateway\'s call is open is not a dead gateway: no run is sent twice', async () => {
  // Spec 1.1 rules 11 and 16: the same run goes out again only when its gateway stopped; a retry
  // is a new run. One advance of an hour crosses the retry's wait and its lease at once.
  up.handle((_req, res) => { res.writeHead(503); res.end('down for now'); });
  try {
    const from = up.requests.length;
    const s = await create({ path: '/jobs/jump', every: 'P1D', catchUp: 86_400 });
    await runNow(s.id);
    await receivedAt(from + 1);
    await armed(s.id);
    await advance('PT1H');
    await receivedAt(from + 2);
    await armed(s.id);
    await advance('PT1H');
    const [run] = await runs(s.id, 1);
    const sent = up.requests.slice(from).filter((q) => q.url === '/svc/jobs/jump');
    const ids = sent.map((q) => q.headers['gateway-job-run']);
    assert.equal(sent.length, 3, JSON.stringify(ids));
    assert.equal(new Set(ids).size, 3, `each attempt is a new run: ${JSON.stringify(ids)}`);
    assert.deepEqual(sent.map((q) => q.headers['gateway-job-attempt']), ['1', '2', '3']);
    assert.equal(run!.state, 'failed');
    assert.deepEqual(run!.attempts.map((a: Json) => a.status), [503, 503, 503]);
    assert.doesNotMatch(JSON.stringify(run), /stopped before the answer/);
  } finally {
    up.handle(undefined);
  }
});

test('a call still open when the test clock jumps past its lease ends by its own timeout, once', async () => {
  let release: (() => void) | undefined;
  up.handle((_req, res) => new Promise<void>((done) => { release = () => { if (!res.headersSent) { res.writeHead(200); res.end('late'); } done(); }; }));
  try {
    const from = up.requests.length;
    const s = await create({ path: '/jobs/slow', every: 'P1D', timeout: 'PT30S' });
    await runNow(s.id);
    await receivedAt(from + 1);
    await advance('PT10M');
    release?.();
    await armed(s.id);
    await pause();
    const sent = up.requests.slice(from).filter((q) => q.url === '/svc/jobs/slow');
    const ids = sent.map((q) => `${q.headers['gateway-job-run']}#${q.headers['gateway-job-attempt']}`);
    assert.equal(new Set(sent.map((q) => q.headers['gateway-job-run'])).size, sent.length, `no run twice: ${JSON.stringify(ids)}`);
    const current = await schedule(s.id);
    assert.doesNotMatch(JSON.stringify(current), /stopped before the answer/);
  } finally {
    release?.();
    up.handle(undefined);
  }
});
