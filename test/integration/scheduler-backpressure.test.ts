/**
 * GATEWAY_SCHEDULER_MAX_CALLS: a ScheduleActor keeps at most that many calls in flight. Due turns
 * past it wait in the database and go out as answers make room; none is dropped or sent twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { advanceClock, internalWith } from '../helpers/scheduler.ts';
import { startUpstream } from '../helpers/upstream.ts';

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await ok()) return;
    await new Promise((res) => setTimeout(res, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('at most GATEWAY_SCHEDULER_MAX_CALLS calls are in flight; the other due turns go out as answers come', async () => {
  const t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_SCHEDULER_SHARDS: '1', GATEWAY_SCHEDULER_MAX_CALLS: '2' });
  const held: Array<() => void> = [];
  const up = await startUpstream((_req, res) => { held.push(() => { res.writeHead(200); res.end('ok'); }); });
  try {
    const root = await signInAdmin(t.url('control'));
    await root.put('/api/roles/jobs', {});
    await root.put('/api/routes/billing', { upstream: up.origin, paths: ['/billing'], rule: { roles: ['jobs'] } });
    const token = (await root.post('/api/tokens', { name: 'svc', kind: 'schedules', routes: ['billing'], roles: ['jobs'] })).json.token as string;
    const internal = internalWith(() => t.url('internal'), () => token);
    const now = (await call(`${t.url('control')}/__clock`)).json.now as number;
    const at = new Date(now + 60_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await internal('POST', '/api/schedules', { routeId: 'billing', path: `/billing/${i}`, at, catchUp: 3600, roles: ['jobs'] });
      assert.equal(c.status, 201, c.text);
      ids.push(c.json.id);
    }
    await advanceClock(t.url('control'), 'PT61S');

    for (const [seen, release] of [[2, 2], [4, 2], [5, 1]] as const) {
      await until(`${seen} calls at the service`, () => up.requests.length === seen);
      // Nothing more leaves while the calls in flight are at the limit.
      await new Promise((res) => setTimeout(res, 300));
      assert.equal(up.requests.length, seen, `no more than ${seen} calls while ${held.length} are unanswered`);
      for (const answer of held.splice(0, release)) answer();
    }
    for (const id of ids) {
      await until(`the run of ${id} recorded`, async () => (await internal('GET', `/api/schedules/${id}/runs`)).json.length === 1);
      const [run] = (await internal('GET', `/api/schedules/${id}/runs`)).json;
      assert.equal(run.state, 'done', `${id} went out once and was answered`);
    }
    assert.equal(new Set(up.requests.map((r) => r.url)).size, 5, 'each schedule called once');
  } finally {
    for (const answer of held.splice(0)) answer();
    await t.close();
    await up.close();
  }
});
