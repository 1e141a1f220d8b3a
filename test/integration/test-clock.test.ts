/**
 * The test clock starts where GATEWAY_CLOCK_START says (CONTRACT.md "Test clock"; README settings):
 * the main thread's clock and the actors' clocks alike, and it moves from there.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { until } from '../helpers/until.ts';

const START = Date.UTC(2031, 2, 30, 0, 59, 30);
let t: TestGateway | undefined;
after(async () => { await t?.close(); });

test('the gateway and its actors start at GATEWAY_CLOCK_START and move from there', async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_CLOCK_START: '2031-03-30T02:59:30+02:00' });
  const control = t.url('control');
  assert.deepEqual((await call(`${control}/__clock`)).json, { now: START });
  const doc = (await call(`${control}/api/openapi.json`)).json;
  assert.match(doc.paths['/__clock'].get.description, /GATEWAY_CLOCK_START/);

  // The AuditBatcher sweeps on its own thread's clock, an hour after its start: the sweep the move
  // brings is stamped at the start given plus that hour (the trail answers in seconds).
  const root = await signInAdmin(control);
  assert.equal((await root.get('/api/settings/audit')).json.lastSweep, null);
  const moved = await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT1H' } });
  assert.deepEqual(moved.json, { now: START + 3_600_000 });
  const sweep = await until(async () => (await root.get('/api/settings/audit')).json.lastSweep ?? undefined, 'the sweep an hour after the start');
  assert.equal(sweep.at, (START + 3_600_000) / 1000, 'the actor\'s clock started at the instant given and moved with the gateway\'s');
});
