import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway({ GATEWAY_CLOCK: 'manual' }); });
after(async () => { await t?.close(); });

test('the test clock reads and advances (CONTRACT.md)', async () => {
  const control = t.url('control');
  const start = await call(`${control}/__clock`);
  assert.equal(start.status, 200);
  assert.equal(typeof start.json.now, 'number');
  const moved = await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT5M' } });
  assert.equal(moved.status, 200);
  assert.equal(moved.json.now, start.json.now + 5 * 60_000);
  assert.equal((await call(`${control}/__clock`)).json.now, moved.json.now);
});

test('a bad duration is refused with the field named', async () => {
  const control = t.url('control');
  for (const by of ['5 minutes', 42, '', 'PT']) {
    const a = await call(`${control}/__clock/advance`, { method: 'POST', body: { by } });
    assert.equal(a.status, 400, String(by));
    assert.equal(a.json.code, 'field.invalid');
    assert.equal(a.json.field, 'by');
  }
});

test('sessions expire on the test clock', async () => {
  const control = t.url('control');
  const a = await call(`${control}/api/session`, { method: 'POST', body: { name: 'root', password: 'root-password-for-tests' } });
  const cookie = String(a.headers['set-cookie']).split(';')[0]!;
  assert.equal((await call(`${control}/api/session`, { headers: { cookie } })).status, 200);
  await call(`${control}/__clock/advance`, { method: 'POST', body: { by: 'PT12H' } });
  assert.equal((await call(`${control}/api/session`, { headers: { cookie } })).status, 401);
});
