import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';
import { TEST_DATABASE } from '../helpers/db.ts';

let t: TestGateway;
let control: string;
before(async () => {
  t = await startTestGateway();
  control = t.url('control');
});
after(async () => { await t?.close(); });

test('root signs in; the cookie is HttpOnly, SameSite=Strict, not Secure over plain HTTP', async () => {
  const a = await call(`${control}/api/session`, { method: 'POST', body: { name: 'root', password: ROOT_PASSWORD }, headers: { origin: control } });
  assert.equal(a.status, 200, a.text);
  assert.equal(a.json.account.name, 'root');
  assert.deepEqual(a.json.account.capabilities, ['root']);
  const setCookie = String(a.headers['set-cookie']);
  assert.match(setCookie, /^mk_session=mks_[\w-]{43};/);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.doesNotMatch(setCookie, /Secure/);
  const cookie = setCookie.split(';')[0]!;
  const me = await call(`${control}/api/session`, { headers: { cookie } });
  assert.equal(me.status, 200);
  assert.equal(me.json.account.name, 'root');
  assert.equal(me.json.via, 'session');
});

test('a second session cookie set by another page of the host (a longer path, sent first) does not sign the operator out', async () => {
  const cookie = await signIn(control, 'root', ROOT_PASSWORD);
  for (const tossed of ['mk_session=mks_tossed_by_a_page_on_another_port', 'mk_session=', 'mk_session=junk; theme=dark']) {
    const me = await call(`${control}/api/session`, { headers: { cookie: `${tossed}; ${cookie}` } });
    assert.equal(me.status, 200, `${tossed}: ${me.text}`);
    assert.equal(me.json.account.name, 'root');
  }
});

test('a wrong password, an unknown name: the same refusal', async () => {
  const wrong = await call(`${control}/api/session`, { method: 'POST', body: { name: 'root', password: 'not the password' } });
  const unknown = await call(`${control}/api/session`, { method: 'POST', body: { name: 'nobody', password: 'whatever it is' } });
  assert.equal(wrong.status, 401);
  assert.equal(unknown.status, 401);
  assert.equal(wrong.json.code, 'signin.refused');
  assert.deepEqual(wrong.json, unknown.json);
  assert.equal(wrong.headers['set-cookie'], undefined);
});

test('without a session, the session resource is 401', async () => {
  const a = await call(`${control}/api/session`);
  assert.equal(a.status, 401);
  assert.equal(a.json.code, 'unauthenticated');
  const forged = await call(`${control}/api/session`, { headers: { cookie: 'mk_session=mks_forged' } });
  assert.equal(forged.status, 401);
});

test('unsafe methods with a session cookie need the console\'s own Origin', async () => {
  const cookie = await signIn(control, 'root', ROOT_PASSWORD);
  const none = await call(`${control}/api/session`, { method: 'DELETE', headers: { cookie } });
  assert.equal(none.status, 403);
  assert.equal(none.json.code, 'origin-mismatch');
  const other = await call(`${control}/api/session`, { method: 'DELETE', headers: { cookie, origin: 'https://evil.example' } });
  assert.equal(other.status, 403);
  assert.match(other.json.detail, /evil\.example/);
  const stillIn = await call(`${control}/api/session`, { headers: { cookie } });
  assert.equal(stillIn.status, 200, 'a refused sign-out leaves the session alone');
});

test('sign-in from another site is refused (login CSRF)', async () => {
  const a = await call(`${control}/api/session`, { method: 'POST', body: { name: 'root', password: ROOT_PASSWORD }, headers: { origin: 'https://evil.example' } });
  assert.equal(a.status, 403);
  assert.equal(a.json.code, 'origin-mismatch');
});

test('DELETE /api/session signs out: the cookie is cleared and dead', async () => {
  const cookie = await signIn(control, 'root', ROOT_PASSWORD);
  const out = await call(`${control}/api/session`, { method: 'DELETE', headers: { cookie, origin: control } });
  assert.equal(out.status, 204);
  assert.match(String(out.headers['set-cookie']), /mk_session=;.*Max-Age=0/);
  const after = await call(`${control}/api/session`, { headers: { cookie } });
  assert.equal(after.status, 401);
});

test('bad sign-in bodies are refused with the field named, never a 500', async () => {
  const cases: Array<[unknown, string | undefined, number, string]> = [
    [undefined, '{not json', 400, 'body.invalid-json'],
    [undefined, '[1,2]', 400, 'field.invalid'],
    [{ name: 42, password: 'x' }, undefined, 400, 'field.invalid'],
    [{ name: 'root' }, undefined, 400, 'field.invalid'],
    [{ name: 'root', password: 'p'.repeat(2000) }, undefined, 400, 'field.invalid'],
    [{ name: 'root', password: 'x', code: 7 }, undefined, 400, 'field.invalid'],
  ];
  for (const [body, raw, status, code] of cases) {
    const a = await call(`${control}/api/session`, { method: 'POST', ...(raw !== undefined ? { raw, headers: { 'content-type': 'application/json' } } : { body }) });
    assert.equal(a.status, status, `${raw ?? JSON.stringify(body)} -> ${a.text}`);
    assert.equal(a.json.code, code);
  }
  const field = await call(`${control}/api/session`, { method: 'POST', body: { name: 'root' } });
  assert.equal(field.json.field, 'password');
  const media = await call(`${control}/api/session`, { method: 'POST', raw: 'name=root', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  assert.equal(media.status, 415);
  assert.equal(media.json.code, 'body.media-type');
  const big = await call(`${control}/api/session`, { method: 'POST', raw: 'x'.repeat(1024 * 1024 + 10), headers: { 'content-type': 'application/json' } });
  assert.equal(big.status, 413);
  assert.equal(big.json.code, 'body.too-large');
});

test('five failures lock the name; the sixth try is 429 even with the right password', async () => {
  const name = 'root';
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    statuses.push((await call(`${control}/api/session`, { method: 'POST', body: { name, password: `wrong ${i} password` } })).status);
  }
  assert.deepEqual(statuses.slice(0, 4), [401, 401, 401, 401]);
  assert.equal(statuses[4], 429);
  const right = await call(`${control}/api/session`, { method: 'POST', body: { name, password: ROOT_PASSWORD } });
  assert.equal(right.status, 429);
  assert.equal(right.json.code, 'signin.locked');
  assert.ok(Number(right.headers['retry-after']) > 0);
  assert.ok(t.logs.some((r) => r.msg === 'sign-in locked'));
});

test('attempts sent at once are checked no more than the failures left: one lock, one line', async () => {
  const name = 'burst-visitor';
  const count = (msg: string) => t.logs.filter((r) => r.msg === msg).length;
  const [refusedBefore, lockedBefore] = [count('sign-in refused'), count('sign-in locked')];
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => call(`${control}/api/session`, { method: 'POST', body: { name, password: `guess ${i} password` } })));
  const statuses = answers.map((a) => a.status);
  assert.equal(statuses.filter((s) => s === 401).length, 4, `four refused, the fifth locks: ${statuses.join(' ')}`);
  assert.equal(statuses.filter((s) => s === 429).length, 26);
  assert.ok(answers.every((a) => a.status === 401 || a.json.code === 'signin.locked'));
  assert.equal(count('sign-in refused') - refusedBefore, 4, 'five passwords were checked in all');
  assert.equal(count('sign-in locked') - lockedBefore, 1, 'the lock is tripped once');
});

test('failures on two nodes of one database count together: the lock holds on both', { skip: TEST_DATABASE !== 'postgres' && 'two nodes need PostgreSQL: one gateway per SQLite data directory' }, async () => {
  const other = await startTestGateway({ GATEWAY_NODE_NAME: 'node-b' }, t.db);
  try {
    const name = 'two-node-visitor';
    const attempt = (url: string, i: number) => call(`${url}/api/session`, { method: 'POST', body: { name, password: `guess ${i} password` } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(i % 2 === 0 ? control : other.url('control'), i)).status);
    assert.deepEqual(statuses, [401, 401, 401, 401, 429], 'the fifth failure, wherever it lands, locks the name');
    for (const url of [control, other.url('control')]) {
      const locked = await attempt(url, 9);
      assert.equal(locked.status, 429, url);
      assert.equal(locked.json.code, 'signin.locked');
    }
  } finally {
    await other.gw.stop();
  }
});
