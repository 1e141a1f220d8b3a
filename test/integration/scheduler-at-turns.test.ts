/**
 * A delayed action (`at`, spec 1.1 rule 21) is finished by its own turn only: not by a run of the
 * cadence it had before a PUT gave it its moment, nor by a retry a pause let go unsent (resume
 * then fires it, within catchUp).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import { until } from '../helpers/until.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import type { Admin } from '../helpers/admin.ts';
import type { Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  assert.equal((await root.put('/api/routes/jobs', { upstream: `${up.origin}/svc`, paths: ['/jobs'], rule: null })).status, 201);
  token = await schedulesToken(root, 'jobs-svc', ['jobs'], []);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const schedule = async (id: string) => (await internal('GET', `/api/schedules/${id}`)).json;
const now = async () => (await call(`${t.url('control')}/__clock`)).json.now as number;
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const calls = (path: string) => up.requests.filter((r) => r.url.includes(path)).length;

test('a run of the old cadence closing after a PUT gave the schedule its moment does not finish it', async () => {
  up.handle((_req, res) => { res.writeHead(202); res.end(); });
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
    up.handle((_req, res) => { res.writeHead(200); res.end('ok'); });

    await advanceClock(t.url('control'), 'PT1H1S');
    await until(async () => ((await schedule(made.json.id)).finished === true ? true : undefined), 'the delayed action sent, then finished');
    assert.equal(calls('/replaced'), 2, 'the run now, then the delayed action');
  } finally {
    up.handle(undefined);
  }
});

test('pausing a delayed action whose retry was owed lets the retry go; resume sends the action again', async () => {
  up.handle((_req, res) => { res.writeHead(503); res.end('down'); });
  try {
    const at = rfc3339((await now()) + 60_000);
    const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/paused-at', at, catchUp: 0 });
    assert.equal(made.status, 201, made.text);
    await advanceClock(t.url('control'), 'PT61S');
    await until(async () => {
      const s = await schedule(made.json.id);
      return s.inFlight === null && calls('/paused-at') === 1 && s.nextRunAt !== null ? s : undefined;
    }, 'the first attempt failed, a retry owed');
    up.handle((_req, res) => { res.writeHead(200); res.end('ok'); });
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
    up.handle(undefined);
  }
});
