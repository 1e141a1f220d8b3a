/**
 * A vault value a schedule's headers name never lands in what the gateway stores or shows (spec
 * 1.1 rule 7), even when the service repeats it in its answer: the run's detail, kept in the
 * history and sent on the live feed, carries the reference instead.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
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

test('a service that echoes a header taken from the vault: the run records the reference, not the secret', async () => {
  assert.ok((await root.put('/api/vault/API_KEY', { value: 'sk_live_SECRET123' })).status < 300);
  assert.ok((await root.put('/api/vault/API_KEY_OLD', { value: 'sk_live_SECRET123_old' })).status < 300);
  const seen: string[] = [];
  up.handle((req, res) => {
    seen.push(String(req.headers['x-api-key']));
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`invalid key ${req.headers['x-api-key']} (also tried ${req.headers['x-old-key']})`);
  });
  try {
    const made = await internal('POST', '/api/schedules', { routeId: 'jobs', path: '/jobs/x', every: 'PT1H', headers: { 'X-Api-Key': '${API_KEY}', 'X-Old-Key': '$API_KEY_OLD' } });
    assert.equal(made.status, 201, made.text);
    assert.equal((await internal('POST', `/api/schedules/${made.json.id}/run`)).status < 300, true);
    const runs = await until(async () => {
      const r = await internal('GET', `/api/schedules/${made.json.id}/runs`);
      return Array.isArray(r.json) && r.json.length > 0 && r.json[0].detail ? r : undefined;
    }, 'the run answered');
    assert.deepEqual(seen, ['sk_live_SECRET123'], 'the service got the secret itself');
    assert.doesNotMatch(runs.text, /SECRET123/, runs.text);
    assert.equal(runs.json[0].detail, '400 Bad Request: invalid key ${API_KEY} (also tried ${API_KEY_OLD})');
    const schedule = await internal('GET', `/api/schedules/${made.json.id}`);
    assert.doesNotMatch(schedule.text, /SECRET123/, 'nor in the schedule\'s last run');
  } finally {
    up.handle(undefined);
  }
});
