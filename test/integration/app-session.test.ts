import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, signIn } from '../helpers/http.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
before(async () => {
  t = await startTestGateway();
  up = await startUpstream();
  root = await signInAdmin(t.url('control'));
  await root.put('/api/roles/staff', {});
  await root.put('/api/routes/app', { upstream: up.origin, paths: ['/app'], rule: { roles: ['staff'] } });
  await root.post('/api/accounts', { name: 'ann', password: 'ann-password-12', roles: ['staff'] });
});
after(async () => {
  await t?.close();
  await up?.close();
});

test('an application session opens protected routes on the data plane, and nothing else', async () => {
  const d = t.url('data');
  const signin = await call(`${d}/.meerkat/session`, { method: 'POST', body: { name: 'ann', password: 'ann-password-12' } });
  assert.equal(signin.status, 200, signin.text);
  const setCookie = String(signin.headers['set-cookie']);
  assert.match(setCookie, /^mk_app=mks_[\w-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
  const cookie = `${setCookie.split(';')[0]}; theme=dark`;

  const through = await call(`${d}/app/orders`, { headers: { cookie } });
  assert.equal(through.status, 200, through.text);
  assert.equal(up.last().headers['x-gateway-user'], 'ann');
  assert.equal(up.last().headers.cookie, 'theme=dark', 'the gateway\'s own cookie does not travel upstream');
  assert.equal((await call(`${d}/.meerkat/session`, { headers: { cookie } })).json.account.name, 'ann');

  // Each plane's cookie opens only its plane.
  const onControl = await call(`${t.url('control')}/api/session`, { headers: { cookie } });
  assert.equal(onControl.status, 401);
  const consoleCookie = await signIn(t.url('control'), 'ann', 'ann-password-12');
  const consoleOnData = await call(`${d}/app/orders`, { headers: { cookie: consoleCookie } });
  assert.equal(consoleOnData.status, 401);
  assert.equal(consoleOnData.json.code, 'unauthenticated');
  const onInternal = await call(`${t.url('internal')}/api/schedules`, { headers: { cookie } });
  assert.equal(onInternal.json.code, 'tokens-only');

  // Signing out needs the page's own Origin, then the cookie is dead.
  const csrf = await call(`${d}/.meerkat/session`, { method: 'DELETE', headers: { cookie, origin: 'https://evil.example' } });
  assert.equal(csrf.json.code, 'origin-mismatch');
  const out = await call(`${d}/.meerkat/session`, { method: 'DELETE', headers: { cookie, origin: d } });
  assert.equal(out.status, 204);
  assert.equal((await call(`${d}/app/orders`, { headers: { cookie } })).status, 401);
});

test('application sign-in refuses like the console: one answer for every wrong case', async () => {
  const d = t.url('data');
  const wrong = await call(`${d}/.meerkat/session`, { method: 'POST', body: { name: 'ann', password: 'not-the-password' } });
  const unknown = await call(`${d}/.meerkat/session`, { method: 'POST', body: { name: 'nobody', password: 'not-the-password' } });
  for (const a of [wrong, unknown]) {
    assert.equal(a.status, 401);
    assert.equal(a.json.code, 'signin.refused');
  }
  assert.equal(wrong.json.detail, unknown.json.detail);
  const bad = await call(`${d}/.meerkat/session`, { method: 'POST', body: { name: 'ann' } });
  assert.equal(bad.json.field, 'password');
});
