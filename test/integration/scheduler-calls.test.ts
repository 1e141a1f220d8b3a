/**
 * What a scheduled call carries and how its turn ends, as a backend using the scheduling API sees
 * them (spec 1.1, 2.1):
 * - a vault value the headers name never lands in what the gateway stores or shows (rule 7), even
 *   when the service repeats it: the run's detail carries the reference instead;
 * - a delayed action (`at`, rule 21) is finished by its own turn only: not by a run of the cadence
 *   it had before a PUT gave it its moment, nor by a retry a pause let go unsent (resume fires it);
 * - the body's media type: `contentType` first, then a `Content-Type` header, then the body's own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulesToken, useSchedulingStand } from '../helpers/scheduler.ts';
import { until } from '../helpers/until.ts';
import { openStore } from '../../src/store/orm.ts';

const s = useSchedulingStand(async ({ root, up }) => {
  assert.equal((await root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'], rule: null })).status, 201);
  return { token: await schedulesToken(root, 'jobs-svc', ['jobs'], []) };
});
const internal = internalWith(() => s.t.url('internal'), () => s.token);

/** Writes an hourly schedule on the jobs route, runs it now and reads its runs once the first answered. */
async function runOnce(fields: { path: string; headers: Record<string, string> }) {
  const made = await internal('POST', '/api/schedules', { routeId: 'jobs', every: 'PT1H', ...fields });
  assert.equal(made.status, 201, made.text);
  assert.equal((await internal('POST', `/api/schedules/${made.json.id}/run`)).status < 300, true);
  const runs = await until(async () => {
    const r = await internal('GET', `/api/schedules/${made.json.id}/runs`);
    return Array.isArray(r.json) && r.json.length > 0 && r.json[0].detail ? r : undefined;
  }, 'the run answered');
  return { made, runs };
}

test('a service that echoes a header taken from the vault: the run records the reference, not the secret', async () => {
  assert.ok((await s.root.put('/api/vault/API_KEY', { value: 'sk_live_SECRET123' })).status < 300);
  assert.ok((await s.root.put('/api/vault/API_KEY_OLD', { value: 'sk_live_SECRET123_old' })).status < 300);
  const seen: string[] = [];
  s.up.handle((req, res) => {
    seen.push(String(req.headers['x-api-key']));
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`invalid key ${req.headers['x-api-key']} (also tried ${req.headers['x-old-key']})`);
  });
  try {
    const { made, runs } = await runOnce({ path: '/jobs/x', headers: { 'X-Api-Key': '${API_KEY}', 'X-Old-Key': '$API_KEY_OLD' } });
    assert.deepEqual(seen, ['sk_live_SECRET123'], 'the service got the secret itself');
    assert.doesNotMatch(runs.text, /SECRET123/, runs.text);
    assert.equal(runs.json[0].detail, '400 Bad Request: invalid key ${API_KEY} (also tried ${API_KEY_OLD})');
    const schedule = await internal('GET', `/api/schedules/${made.json.id}`);
    assert.doesNotMatch(schedule.text, /SECRET123/, 'nor in the schedule\'s last run');
  } finally {
    s.up.handle(undefined);
  }
});

test('a service that echoes the vault value JSON-escaped, percent-encoded or in capitals: the run records the reference', async () => {
  const value = 'pa"ss\\wo/rd é>';
  assert.ok((await s.root.put('/api/vault/ESCAPED', { value })).status < 300);
  s.up.handle((req, res) => {
    const got = String(req.headers['x-escaped']);
    const json = JSON.stringify(got);
    const body = `{"headers":{"x-escaped":${json}},"php":${json.replace(/\//g, '\\/')},"quoted":${JSON.stringify(`refused ${json}`)},"url":"${encodeURIComponent(got)}","loud":${JSON.stringify(got.toUpperCase())}}`;
    res.writeHead(422, { 'content-type': 'application/json' });
    res.end(body);
  });
  try {
    const { runs } = await runOnce({ path: '/jobs/echo', headers: { 'X-Escaped': '$ESCAPED' } });
    const detail = String(runs.json[0].detail);
    assert.doesNotMatch(detail.toLowerCase(), /wo\\?\/rd|wo%2frd/, detail);
    assert.equal(detail.split('${ESCAPED}').length - 1, 5, detail);
  } finally {
    s.up.handle(undefined);
  }
});

test('a schedule row that holds a gateway session cookie (written before it was refused) sends it on to no service', async () => {
  const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/cookie', every: 'PT1H', headers: { Cookie: 'theme=dark' } });
  assert.equal(made.status, 201, made.text);
  const store = await openStore({ dataDir: s.t.db.dataDir, databaseUrl: s.t.db.databaseUrl });
  try {
    const headers = JSON.stringify({ Cookie: 'theme=dark; mk_app=mks_stolen; mk_session=mks_console' });
    await store.em().getConnection().execute(`update schedules set headers = ${s.t.db.databaseUrl ? 'cast(? as jsonb)' : '?'} where id = ?`, [headers, made.json.id]);
  } finally {
    await store.close();
  }
  const before = s.up.requests.length;
  assert.equal((await internal('POST', `/api/schedules/${made.json.id}/run`)).status < 300, true);
  await until(() => s.up.requests.length > before || undefined, 'the call reached the service');
  assert.equal(s.up.last().headers.cookie, 'theme=dark');
});

test('vault values named many times are bounded: 16 references a value where written, 128 KiB of headers where called', async () => {
  const big = 'A'.repeat(65_536);
  assert.ok((await s.root.put('/api/vault/BIG', { value: big })).status < 300);
  const seventeen = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/amp', every: 'PT1H', headers: { 'X-H': '$BIG'.repeat(17) } });
  assert.equal(seventeen.status, 400, seventeen.text);
  assert.equal(seventeen.json.code, 'schedule.header-invalid');
  assert.equal(seventeen.json.field, 'headers.X-H');
  assert.match(seventeen.json.detail, /names 17 vault values; a header value names at most 16/);

  // Written within the bound, the call's headers would still be 10 x 16 x 64 KiB: refused unsent, recorded, not retried.
  const before = s.up.requests.length;
  const headers = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, '${BIG}'.repeat(16)]));
  const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/amp', every: 'PT1H', headers });
  assert.equal(made.status, 201, made.text);
  assert.equal((await internal('POST', `/api/schedules/${made.json.id}/run`)).status < 300, true);
  const runs = await until(async () => {
    const r = await internal('GET', `/api/schedules/${made.json.id}/runs`);
    return Array.isArray(r.json) && r.json[0]?.state === 'failed' ? r : undefined;
  }, 'the run closed');
  assert.equal(runs.json[0].status, 431, runs.text);
  assert.match(runs.json[0].detail, /the header X-H0 takes this call's headers past 128 KiB; nothing was sent/);
  assert.equal(runs.json[0].attempt, 1, 'not tried again');
  assert.equal(s.up.requests.length, before, 'nothing reached the service');

  // Within the bound, values named several times go (the service's own head limit is 16 KiB here).
  assert.ok((await s.root.put('/api/vault/MID', { value: 'B'.repeat(4096) })).status < 300);
  const seen: number[] = [];
  s.up.handle((req, res) => {
    seen.push(String(req.headers['x-two']).length);
    res.writeHead(204);
    res.end();
  });
  try {
    const two = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/two', every: 'PT1H', headers: { 'X-Two': '$MID$MID' } });
    assert.equal((await internal('POST', `/api/schedules/${two.json.id}/run`)).status < 300, true);
    await until(async () => (seen.length > 0 ? true : undefined), 'the call went');
    assert.deepEqual(seen, [8192]);
  } finally {
    s.up.handle(undefined);
    assert.equal((await s.root.del('/api/vault/BIG')).status, 204);
    assert.equal((await s.root.del('/api/vault/MID')).status, 204);
  }
});

test('timeout bounds the whole call on the gateway\'s clock: an answer trickled closes the run on its status, a silent service is a 504', async () => {
  const open: Array<import('node:http').ServerResponse> = [];
  s.up.handle((req, res) => {
    open.push(res);
    // Headers at once, then a byte, then nothing: the idle timers of the client never fire.
    if (req.url!.includes('trickle')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
    }
  });
  try {
    const runOf = async (path: string, body: Record<string, unknown>) => {
      const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path, every: 'PT1H', ...body });
      assert.equal(made.status, 201, made.text);
      assert.equal((await internal('POST', `/api/schedules/${made.json.id}/run`)).status < 300, true);
      await until(async () => (s.up.requests.some((r) => r.url.includes(path)) ? true : undefined), `${path} reached the service`);
      return made.json.id as string;
    };
    const closed = (id: string) => until(async () => {
      const r = await internal('GET', `/api/schedules/${id}/runs`);
      return Array.isArray(r.json) && r.json.length > 0 ? r.json[0] : undefined;
    }, 'the run closed');

    const trickled = await runOf('/jobs/trickle', { timeout: 'PT30S' });
    await advanceClock(s.t.url('control'), 'PT31S');
    const done = await closed(trickled);
    assert.deepEqual([done.state, done.status, done.attempt], ['done', 200, 1], JSON.stringify(done));
    // Past the lease too: the run is closed, nothing is sent again.
    await advanceClock(s.t.url('control'), 'PT5M1S');
    assert.equal(calls('/jobs/trickle'), 1, 'sent once');

    const silent = await runOf('/jobs/silent', { timeout: 'PT5S', catchUp: 1 });
    await advanceClock(s.t.url('control'), 'PT6S');
    const failed = await closed(silent);
    assert.equal(failed.status, 504, JSON.stringify(failed));
    assert.match(failed.detail, /did not answer within 5 s/);
  } finally {
    s.up.handle(undefined);
    for (const res of open) res.destroy();
  }
});

const schedule = async (id: string) => (await internal('GET', `/api/schedules/${id}`)).json;
const now = async () => (await call(`${s.t.url('control')}/__clock`)).json.now as number;
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const calls = (path: string) => s.up.requests.filter((r) => r.url.includes(path)).length;

test('a run of the old cadence closing after a PUT gave the schedule its moment does not finish it', async () => {
  s.up.handle((_req, res) => { res.writeHead(202); res.end(); });
  try {
    const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/replaced', every: 'PT1H' });
    assert.equal(made.status, 201, made.text);
    await internal('POST', `/api/schedules/${made.json.id}/run`);
    const accepted = await until(async () => {
      const s = await schedule(made.json.id);
      return s.inFlight?.phase === 'accepted' ? s : undefined;
    }, 'the run accepted');
    const at = rfc3339((await now()) + 3_600_000);
    const put = await internal('PUT', `/api/schedules/${made.json.id}`, { routeId: 'jobs', path: '/jobs/replaced', at });
    assert.equal(put.status, 200, put.text);
    const reported = await internal('PATCH', `/api/schedules/${made.json.id}/run`, { run: accepted.inFlight.runId, state: 'done' });
    assert.equal(reported.status, 200, reported.text);
    assert.deepEqual([reported.json.finished, reported.json.nextRunAt], [false, Math.floor(Date.parse(at) / 1000)], 'the delayed action is still owed');
    s.up.handle((_req, res) => { res.writeHead(200); res.end('ok'); });

    await advanceClock(s.t.url('control'), 'PT1H1S');
    await until(async () => ((await schedule(made.json.id)).finished === true ? true : undefined), 'the delayed action sent, then finished');
    assert.equal(calls('/replaced'), 2, 'the run now, then the delayed action');
  } finally {
    s.up.handle(undefined);
  }
});

test('pausing a delayed action whose retry was owed lets the retry go; resume sends the action again', async () => {
  s.up.handle((_req, res) => { res.writeHead(503); res.end('down'); });
  try {
    const at = rfc3339((await now()) + 60_000);
    const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/paused-at', at, catchUp: 0 });
    assert.equal(made.status, 201, made.text);
    await advanceClock(s.t.url('control'), 'PT61S');
    await until(async () => {
      const s = await schedule(made.json.id);
      return s.inFlight === null && calls('/paused-at') === 1 && s.nextRunAt !== null ? s : undefined;
    }, 'the first attempt failed, a retry owed');
    s.up.handle((_req, res) => { res.writeHead(200); res.end('ok'); });
    const paused = await internal('POST', `/api/schedules/${made.json.id}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.deepEqual([paused.json.finished, paused.json.nextRunAt], [false, null], 'let go, not finished');
    assert.match(paused.json.lastRun.detail, /was not sent: the schedule was paused/);
    const resumed = await internal('POST', `/api/schedules/${made.json.id}/resume`);
    assert.equal(resumed.status, 200, resumed.text);
    assert.notEqual(resumed.json.nextRunAt, null, 'resume arms the delayed action again');
    await until(async () => ((await schedule(made.json.id)).finished === true ? true : undefined), 'sent again, then finished');
    assert.equal(calls('/paused-at'), 2);
    assert.equal((await schedule(made.json.id)).lastRun.status, 200);
  } finally {
    s.up.handle(undefined);
  }
});


async function typeSent(path: string, fields: Record<string, unknown>): Promise<string | undefined> {
  const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path, every: 'PT1H', ...fields });
  assert.equal(made.status, 201, made.text);
  await internal('POST', `/api/schedules/${made.json.id}/run`);
  const request = await until(() => s.up.requests.find((r) => r.url.endsWith(path)), `the call to ${path}`);
  return request.headers['content-type'] as string | undefined;
}

test('contentType, then a Content-Type header, then the body\'s own type', async () => {
  assert.equal(await typeSent('/jobs/json', { body: { a: 1 } }), 'application/json');
  assert.equal(await typeSent('/jobs/text', { body: 'hello' }), 'text/plain; charset=utf-8');
  assert.equal(await typeSent('/jobs/header', { body: { a: 1 }, headers: { 'Content-Type': 'application/vnd.api+json' } }), 'application/vnd.api+json');
  assert.equal(await typeSent('/jobs/both', { body: { a: 1 }, contentType: 'application/merge-patch+json', headers: { 'content-type': 'application/vnd.api+json' } }), 'application/merge-patch+json');
});
