/**
 * A route whose upstream leads back to the gateway: the request comes back carrying the Via entry
 * the gateway wrote and is refused at once (508 route.loop), instead of calling itself until the
 * route's timeout while each hop holds a connection. Two gateways pointing at each other are
 * caught the same way when the request reaches the first one again.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';

let a: TestGateway;
let b: TestGateway;

async function route(t: TestGateway, id: string, body: Record<string, unknown>): Promise<void> {
  const c = t.url('control');
  const cookie = await signIn(c, 'root', ROOT_PASSWORD);
  const r = await call(`${c}/api/routes/${id}`, { method: 'PUT', headers: { cookie, origin: c }, body: { rule: null, ...body } });
  assert.ok(r.status === 200 || r.status === 201, r.text);
}

before(async () => {
  [a, b] = await Promise.all([startTestGateway(), startTestGateway()]);
  // A long timeout: a loop that is not caught fails the test by its time, not by a 504.
  await route(a, 'self', { upstream: a.url('data'), paths: ['/self'], timeout: 'PT60S' });
  await route(a, 'to-b', { upstream: b.url('data'), paths: ['/pingpong'], timeout: 'PT60S' });
  await route(b, 'to-a', { upstream: a.url('data'), paths: ['/pingpong'], timeout: 'PT60S' });
});

after(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

test('a route pointing at its own gateway is refused with 508 route.loop on the request\'s return', { timeout: 20_000 }, async () => {
  const answer = await call(`${a.url('data')}/self/orders`);
  assert.equal(answer.status, 508, answer.text);
  assert.equal(answer.json.code, 'route.loop');
  assert.match(answer.json.detail, /already passed through this gateway/);
});

test('two gateways pointing at each other: the first refuses the request when it comes back', { timeout: 20_000 }, async () => {
  const answer = await call(`${a.url('data')}/pingpong/x`);
  assert.equal(answer.status, 508, answer.text);
  assert.equal(answer.json.code, 'route.loop');
});
