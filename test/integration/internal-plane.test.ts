import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(async () => { await t?.close(); });

test('the internal plane answers tokens only', async () => {
  const internal = t.url('internal');
  const none = await call(`${internal}/api/schedules`);
  assert.equal(none.status, 401);
  assert.equal(none.json.code, 'unauthenticated');

  const cookie = await signIn(t.url('control'), 'root', ROOT_PASSWORD);
  const browser = await call(`${internal}/api/schedules`, { headers: { cookie } });
  assert.equal(browser.status, 403);
  assert.equal(browser.json.code, 'tokens-only');

  const bad = await call(`${internal}/api/schedules`, { headers: { authorization: 'Bearer mk_unknown' } });
  assert.equal(bad.status, 401);
  const malformed = await call(`${internal}/api/schedules`, { headers: { authorization: 'Basic cm9vdDpyb290' } });
  assert.equal(malformed.status, 401);
  assert.match(malformed.json.detail, /Bearer/);

  const root = [...t.gw.config.view.accountsByName.values()].find((a) => a.name === 'root')!;
  const admin = await t.gw.config.call('token.create', { name: 'ops', kind: 'admin', account: root.id });
  const wrongKind = await call(`${internal}/api/schedules`, { headers: { authorization: `Bearer ${admin.token}` } });
  assert.equal(wrongKind.status, 403);
  assert.equal(wrongKind.json.code, 'token-kind');

  const sched = await t.gw.config.call('token.create', { name: 'billing', kind: 'schedules', routes: ['*'], roles: [] });
  assert.match(sched.token, /^mk_[\w-]{43}$/);
  const ok = await call(`${internal}/api/nothing-here`, { headers: { authorization: `Bearer ${sched.token}` } });
  assert.equal(ok.status, 404, 'a schedules token passes the door; the path itself does not exist');
  assert.equal(ok.json.code, 'not-found');
});

test('an admin token works on the control plane without Origin; a personal token does not', async () => {
  const control = t.url('control');
  const root = t.gw.config.view.accountsByName.get('root')!;
  const admin = await t.gw.config.call('token.create', { name: 'script', kind: 'admin', account: root.id });
  const me = await call(`${control}/api/session`, { headers: { authorization: `Bearer ${admin.token}` } });
  assert.equal(me.status, 200);
  assert.equal(me.json.via, 'token');
  assert.equal(me.json.account.name, 'root');
  const personal = await t.gw.config.call('token.create', { name: 'mine', kind: 'personal', account: root.id });
  const refused = await call(`${control}/api/session`, { headers: { authorization: `Bearer ${personal.token}` } });
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'token-kind');
});
