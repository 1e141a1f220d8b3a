/**
 * Who passes the data plane, through real sockets: personal tokens, their revocation, the kind of
 * token, roles through the hierarchy, endpoint rules, disabled accounts, organisations and their
 * hours (on the manual test clock). Every refusal is checked for its status and its code, and
 * for never reaching the upstream.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { rawRequest, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { adminWith, personWithToken, putOk } from '../helpers/admin.ts';

let t: TestGateway;
let c: string;
let d: string;
let admin: Record<string, string>;
let up: Upstream;
/** Personal tokens by account name. */
const tokens: Record<string, string> = {};
const accountIds: Record<string, string> = {};

function put(path: string, body: unknown): Promise<Answer> {
  return putOk(adminWith(c, admin), path, body);
}

async function account(name: string, roles: string[], organisation?: string): Promise<void> {
  const made = await personWithToken(adminWith(c, admin), name, roles, organisation);
  accountIds[name] = made.id;
  tokens[name] = made.token;
}

async function mint(body: Record<string, unknown>): Promise<string> {
  const a = await call(`${c}/api/tokens`, { method: 'POST', headers: admin, body });
  assert.equal(a.status, 201, a.text);
  assert.match(a.json.token, /^mk_/);
  return a.json.token;
}

/** A data-plane request as `who` (an account name, a raw token, or nobody). */
function as(who: string | undefined, path: string, method = 'GET'): Promise<Answer> {
  const token = who === undefined ? undefined : tokens[who] ?? who;
  return call(`${d}${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

/** A refusal: status, problem+json, code, and nothing reached the upstream. */
async function refused(request: Promise<Answer>, status: number, code: string, what: string): Promise<Answer> {
  const before = up.requests.length;
  const a = await request;
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text}`);
  if (a.text !== '') {
    assert.match(String(a.headers['content-type']), /^application\/problem\+json/, what);
    assert.equal(a.json.code, code, what);
    assert.equal(a.json.status, status, what);
  }
  assert.equal(up.requests.length, before, `${what}: the upstream was not called`);
  return a;
}

async function passed(request: Promise<Answer>, what: string): Promise<Answer> {
  const before = up.requests.length;
  const a = await request;
  assert.equal(a.status, 200, `${what}: ${a.status} ${a.text}`);
  assert.equal(up.requests.length, before + 1, `${what}: the upstream was called once`);
  return a;
}

async function clockNow(): Promise<number> {
  const a = await call(`${c}/__clock`);
  assert.equal(a.status, 200, a.text);
  return a.json.now;
}

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  c = t.url('control');
  d = t.url('data');
  admin = { cookie: await signIn(c, 'root', ROOT_PASSWORD), origin: c };
  up = await startUpstream();
  await put('/api/roles/reader', {});
  await put('/api/roles/staff', { implies: ['reader'] });
  await put('/api/roles/admin', { implies: ['staff'] });
  await put('/api/roles/auditor', {});
  await put('/api/organisations/acme', { name: 'Acme' });
  await put('/api/organisations/globex', { name: 'Globex' });
  await put('/api/routes/open', { upstream: up.origin, paths: ['/open'], rule: null });
  await put('/api/routes/staff', { upstream: up.origin, paths: ['/staff'], rule: { roles: ['staff'] } });
  await put('/api/routes/admin', { upstream: up.origin, paths: ['/admin'], rule: { roles: ['admin'] } });
  await put('/api/routes/reader', { upstream: up.origin, paths: ['/reader'], rule: { roles: ['reader'] } });
  await put('/api/routes/either', { upstream: up.origin, paths: ['/either'], rule: { roles: ['auditor', 'admin'] } });
  await put('/api/routes/orders', {
    upstream: up.origin, paths: ['/orders'], rule: { roles: ['staff'] },
    endpointRules: [{ method: 'GET', path: '/orders/{id}', roles: ['admin'] }, { method: 'DELETE', path: '/orders/{id}/lines/{line}', roles: ['admin'] }],
  });
  await put('/api/routes/shop', {
    upstream: `${up.origin}/internal`, paths: ['/shop'], stripPrefix: true, rule: null,
    endpointRules: [{ method: 'GET', path: '/items/{id}', roles: ['admin'] }],
  });
  await put('/api/routes/acme', { upstream: up.origin, paths: ['/acme'], rule: null, organisation: 'acme' });
  await put('/api/routes/acme-staff', { upstream: up.origin, paths: ['/acme-staff'], rule: { roles: ['staff'] }, organisation: 'acme' });
  await account('alice', ['admin']);
  await account('bob', ['staff']);
  await account('rita', ['reader']);
  await account('carol', ['staff']);
  await account('dave', ['staff'], 'acme');
  await account('erin', ['staff'], 'globex');
});

after(async () => {
  await t?.close();
  await up?.close();
});

test('an open route passes without a token, and with one', async () => {
  await passed(as(undefined, '/open/x'), 'no token');
  await passed(as('bob', '/open/x'), 'a valid token');
  await passed(call(`${d}/open/x`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 'the service\'s own credential');
});

test('a protected route without a token is 401 unauthenticated', async () => {
  await refused(as(undefined, '/staff/x'), 401, 'unauthenticated', 'no Authorization');
  await refused(call(`${d}/staff/x`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401, 'unauthenticated', 'a non-gateway credential');
  await refused(call(`${d}/staff/x`, { headers: { authorization: 'Bearer not-a-gateway-token' } }), 401, 'unauthenticated', 'a foreign bearer token');
  await refused(as(undefined, '/staff/x', 'POST'), 401, 'unauthenticated', 'POST without a token');
});

test('a gateway token is read whatever separates it from Bearer, and never reaches the service in another form', async () => {
  const bob = tokens.bob!;
  await passed(call(`${d}/staff/x`, { headers: { authorization: `Bearer\t${bob}` } }), 'a tab after Bearer');
  await passed(call(`${d}/staff/x`, { headers: { authorization: `bearer  ${bob}` } }), 'two spaces, lower case');
  for (const form of [bob, `Token ${bob}`, `Basic\t${bob}`]) {
    const before = up.requests.length;
    await refused(call(`${d}/open/x`, { headers: { authorization: form } }), 401, 'unauthenticated', `a live token as ${form.replace(bob, '<token>')}`);
    assert.equal(up.requests.length, before, 'nothing reached the service');
  }
  // A credential of the service's own that only looks like ours passes on as it came.
  const foreign = `Token mk_${'B'.repeat(43)}`;
  const before = up.requests.length;
  await passed(call(`${d}/open/x`, { headers: { authorization: foreign } }), 'an unknown mk_ value in another scheme');
  assert.equal(up.requests.at(before)?.headers.authorization, foreign);
});

test('an unknown gateway token is 401, on protected and open routes alike', async () => {
  const forged = `mk_${'A'.repeat(43)}`;
  await refused(as(forged, '/staff/x'), 401, 'unauthenticated', 'unknown token, protected route');
  await refused(as(forged, '/open/x'), 401, 'unauthenticated', 'unknown token, open route: a bad gateway token is refused, never ignored');
  await refused(as('mk_', '/staff/x'), 401, 'unauthenticated', 'an empty gateway token');
  const alice = tokens.alice!;
  await refused(as(`${alice.slice(0, -1)}${alice.endsWith('A') ? 'B' : 'A'}`, '/staff/x'), 401, 'unauthenticated', 'a token one character off');
});

test('a revoked token is refused at once', async () => {
  const minted = await call(`${c}/api/tokens`, { method: 'POST', headers: admin, body: { name: 'short-lived', kind: 'personal', account: 'bob' } });
  assert.equal(minted.status, 201, minted.text);
  await passed(as(minted.json.token, '/staff/x'), 'before revocation');
  const revoke = await call(`${c}/api/tokens/${minted.json.id}`, { method: 'DELETE', headers: admin });
  assert.equal(revoke.status, 204, revoke.text);
  await refused(as(minted.json.token, '/staff/x'), 401, 'unauthenticated', 'the very next request after revocation');
  await refused(as(minted.json.token, '/open/x'), 401, 'unauthenticated', 'a revoked token on an open route');
  await passed(as('bob', '/staff/x'), 'the account\'s other token still works');
});

test('schedules and admin tokens do not open the data plane: 403 token-kind', async () => {
  const schedules = await mint({ name: 'nightly', kind: 'schedules', routes: ['*'] });
  const adminToken = await mint({ name: 'ci-script', kind: 'admin' });
  for (const [kind, token] of [['schedules', schedules], ['admin', adminToken]] as const) {
    await refused(as(token, '/staff/x'), 403, 'token-kind', `${kind} token, protected route`);
    await refused(as(token, '/open/x'), 403, 'token-kind', `${kind} token, open route`);
  }
});

test('roles count through the hierarchy', async () => {
  await passed(as('alice', '/staff/x'), 'admin implies staff');
  await passed(as('alice', '/reader/x'), 'admin implies staff implies reader');
  await passed(as('bob', '/reader/x'), 'staff implies reader');
  await passed(as('alice', '/either/x'), 'one of the listed roles is enough');
  const bobAdmin = await refused(as('bob', '/admin/x'), 403, 'forbidden', 'staff does not imply admin');
  assert.equal(typeof bobAdmin.json.detail, 'string');
  await refused(as('rita', '/staff/x'), 403, 'forbidden', 'reader does not imply staff');
  await refused(as('bob', '/either/x'), 403, 'forbidden', 'staff holds neither auditor nor admin');
});

test('endpoint rules narrow a route per method and path', async () => {
  await refused(as('bob', '/orders/7'), 403, 'forbidden', 'staff GET /orders/7 (needs admin)');
  await passed(as('alice', '/orders/7'), 'admin GET /orders/7');
  await passed(as('bob', '/orders/7', 'POST'), 'no rule for POST /orders/7: the route rule applies');
  await passed(as('bob', '/orders/7', 'PUT'), 'no rule for PUT /orders/7');
  await passed(as('bob', '/orders'), 'GET /orders is not /orders/{id}');
  await passed(as('bob', '/orders/7/lines'), 'GET /orders/7/lines has more segments than /orders/{id}');
  await refused(as('bob', '/orders/7', 'HEAD'), 403, 'forbidden', 'HEAD follows the GET rule');
  await refused(as('bob', '/orders/7/'), 403, 'forbidden', 'a trailing slash does not escape the rule');
  await refused(as('bob', '/orders/7/lines/2', 'DELETE'), 403, 'forbidden', 'staff DELETE /orders/7/lines/2');
  await passed(as('alice', '/orders/7/lines/2', 'DELETE'), 'admin DELETE /orders/7/lines/2');
  await refused(as(undefined, '/orders/7', 'POST'), 401, 'unauthenticated', 'the route rule still needs a token');
  // A service may decode %2F before it splits: /orders/7/lines%2F2 is /orders/7/lines/2 to it, and to the rules.
  await refused(as('bob', '/orders/7/lines%2F2', 'DELETE'), 403, 'forbidden', 'staff DELETE /orders/7/lines%2F2');
  await refused(as('bob', '/orders/7%2flines/2', 'DELETE'), 403, 'forbidden', 'staff DELETE /orders/7%2flines/2');
  await passed(as('alice', '/orders/7/lines%2F2', 'DELETE'), 'admin DELETE /orders/7/lines%2F2');
  await passed(as('bob', '/orders/a%2Fb/c'), 'no rule meets /orders/a/b/c either');
  await refused(as('bob', '/orders%2F7'), 404, 'route.unknown', 'a prefix ends at a real slash: no route, closed');
  // Decoded, then merged (nginx in front of the service): an escaped slash beside a real one is one slash.
  for (const path of ['/orders/%2F7', '/orders/%2f/7', '/orders/7%2F', '/orders/7/lines/%2F2']) {
    const method = path.includes('lines') ? 'DELETE' : 'GET';
    await refused(as('bob', path, method), 403, 'forbidden', `staff ${method} ${path}`);
  }
});

test('an escaped slash cannot take a path past a route of its own: both readings must find the same route', async () => {
  await put('/api/routes/open-admin', { upstream: up.origin, paths: ['/open/admin'], rule: { roles: ['admin'] } });
  try {
    await refused(as('bob', '/open/admin/users'), 403, 'forbidden', 'staff on the admin route');
    // Read as sent, /open/admin%2Fusers is the open route's; a service that decodes %2F reads /open/admin/users.
    for (const path of ['/open/admin%2Fusers', '/open/admin%2fusers']) {
      const a = await refused(as('bob', path), 400, 'path.invalid', path);
      assert.match(a.json.detail, /another route's path for a service that decodes it/);
      await refused(as(undefined, path), 400, 'path.invalid', `${path} without a token`);
    }
    await refused(as('bob', '/open%2Fadmin/users'), 404, 'route.unknown', 'no route for the path as sent: closed');
    await passed(as('alice', '/open/admin/users'), 'admin on the admin route');
    await passed(as('bob', '/open/a%2Fb'), 'both readings on the open route');
    // The escaped slash beside a real one: /open/%2Fadmin is /open/admin once decoded and merged.
    for (const path of ['/open/%2Fadmin', '/open/%2F/admin/users', '/open/%2fadmin/users']) {
      await refused(as(undefined, path), 400, 'path.invalid', `${path} without a token`);
    }
  } finally {
    assert.equal((await call(`${c}/api/routes/open-admin`, { method: 'DELETE', headers: admin })).status, 204);
  }
});

test('endpoint rules match the path after stripPrefix', async () => {
  await refused(as('bob', '/shop/items/3'), 403, 'forbidden', 'staff GET /shop/items/3 (rule GET /items/{id})');
  await refused(as(undefined, '/shop/items/3'), 401, 'unauthenticated', 'an endpoint rule on an open route needs a token');
  await passed(as('alice', '/shop/items/3'), 'admin GET /shop/items/3');
  assert.equal(up.last().url, '/internal/items/3');
  await passed(as(undefined, '/shop/items'), 'the rest of the open route stays open');
  await passed(as(undefined, '/shop/items/3', 'POST'), 'POST has no rule on this open route');
});

test('path tricks do not escape a rule: encoded letters, doubled slashes, dot segments', async () => {
  const port = Number(new URL(d).port);
  const raw = async (path: string, who: string | undefined) => {
    const auth = who === undefined ? '' : `Authorization: Bearer ${tokens[who]}\r\n`;
    return rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`);
  };
  const cases: Array<[string, string | undefined]> = [
    ['/shop/%69tems/3', 'bob'], ['/shop/%69tems/3', undefined],
    ['/shop//items/3', 'bob'], ['/shop/items//3', 'bob'], ['/shop//items/3', undefined],
    ['/shop/x/../items/3', 'bob'], ['/shop/x/%2e%2e/items/3', 'bob'], ['/shop/./items/3', undefined],
    ['/orders/%37', 'bob'], ['/orders//7', 'bob'],
    ['/open/../staff/x', undefined], ['/open/%2E%2E/admin/x', 'bob'],
  ];
  for (const [path, who] of cases) {
    const before = up.requests.length;
    const r = await raw(path, who);
    const reached = up.requests.slice(before).map((q) => q.url);
    assert.ok(r.status >= 400 && r.status < 500, `${who ?? 'nobody'} GET ${path} -> ${r.status}, upstream saw ${JSON.stringify(reached)}`);
    assert.deepEqual(reached, [], `${who ?? 'nobody'} GET ${path}: nothing reached the upstream`);
  }
  // The same paths with the rights needed do reach the service.
  assert.equal((await raw('/shop/%69tems/3', 'alice')).status, 200);
  assert.equal((await raw('/orders/%37', 'alice')).status, 200);
});

test('paths a service reads as another one do not dodge a route: escaped letters, parameters, backslashes, fragments', async () => {
  await put('/api/routes/tricks-open', { upstream: up.origin, paths: ['/'], hosts: ['tricks.test'], rule: null });
  await put('/api/routes/tricks-admin', { upstream: up.origin, paths: ['/admin'], hosts: ['tricks.test'], rule: { roles: ['admin'] } });
  const port = Number(new URL(d).port);
  const raw = (path: string, who?: string) =>
    rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: tricks.test\r\n${who === undefined ? '' : `Authorization: Bearer ${tokens[who]}\r\n`}Connection: close\r\n\r\n`);
  const cases: Array<[string, number]> = [
    ['/%61dmin/x', 401], ['/admin;x', 401], ['/admin;jsessionid=1/x', 401],
    ['/x/..;/admin', 400], ['/x/..\\admin', 400], ['/x/..%5Cadmin', 400], ['/x/%2e%2e%5cadmin', 400], ['/admin%00', 400], ['/x/;/admin', 400], ['/x/\u2713', 400],
  ];
  for (const [path, status] of cases) {
    const before = up.requests.length;
    const r = await raw(path);
    assert.equal(r.status, status, `GET ${path}: ${r.status} ${r.body}`);
    assert.deepEqual(up.requests.slice(before).map((q) => q.url), [], `GET ${path}: nothing reached the upstream`);
  }
  // The decoded path is the one routed, judged and sent.
  const before = up.requests.length;
  assert.equal((await raw('/%61dmin/%78', 'alice')).status, 200);
  assert.equal(up.requests[before]?.url, '/admin/x');
  assert.equal((await raw('/open/a#b', 'alice')).status, 400, 'a fragment is never part of a request target');
  await refused(call(`${d}/shop/items;x/3`, { headers: { authorization: `Bearer ${tokens.bob}` } }), 403, 'forbidden', 'an endpoint rule holds with parameters on the segment');
  for (const id of ['tricks-open', 'tricks-admin']) assert.equal((await call(`${c}/api/routes/${id}`, { method: 'DELETE', headers: admin })).status, 204);
});

test('a disabled account is refused: 401; enabled again, it passes', async () => {
  await passed(as('carol', '/staff/x'), 'before');
  const off = await call(`${c}/api/accounts/${accountIds.carol}`, { method: 'PATCH', headers: admin, body: { disabled: true } });
  assert.equal(off.status, 200, off.text);
  assert.equal(off.json.disabled, true);
  await refused(as('carol', '/staff/x'), 401, 'unauthenticated', 'disabled account, protected route');
  await refused(as('carol', '/open/x'), 401, 'unauthenticated', 'disabled account, open route');
  const on = await call(`${c}/api/accounts/${accountIds.carol}`, { method: 'PATCH', headers: admin, body: { disabled: false } });
  assert.equal(on.status, 200, on.text);
  await passed(as('carol', '/staff/x'), 'enabled again');
});

test('a role taken away takes effect on the next request', async () => {
  await passed(as('carol', '/staff/x'), 'staff');
  const change = await call(`${c}/api/accounts/${accountIds.carol}`, { method: 'PATCH', headers: admin, body: { roles: ['reader'] } });
  assert.equal(change.status, 200, change.text);
  await refused(as('carol', '/staff/x'), 403, 'forbidden', 'reader only now');
  await passed(as('carol', '/reader/x'), 'reader');
});

test('a route with an organisation serves its members only', async () => {
  await passed(as('dave', '/acme/x'), 'a member of acme');
  await refused(as('erin', '/acme/x'), 403, 'forbidden', 'a member of globex');
  await refused(as('bob', '/acme/x'), 403, 'forbidden', 'a member of no organisation');
  await refused(as(undefined, '/acme/x'), 401, 'unauthenticated', 'nobody');
  await passed(as('dave', '/acme-staff/x'), 'a staff member of acme');
  await refused(as('erin', '/acme-staff/x'), 403, 'forbidden', 'a staff member of globex');
});

/** The wall clock of `zone` at `ms`: weekday (MON…SUN), hours, minutes. */
function wallClock(zone: string, ms: number): { day: string; hour: number; minute: number } {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(ms);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { day: get('weekday').slice(0, 3).toUpperCase(), hour: Number(get('hour')), minute: Number(get('minute')) };
}

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60) % 24).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;

test('organisation hours: inside the window the member passes, outside it is 403 outside-hours', async () => {
  const zone = 'Asia/Kolkata';
  const now = await clockNow();
  const wall = wallClock(zone, now);
  const from = wall.hour * 60 + wall.minute;
  // Two hours from the current minute, on today's weekday in the organisation's zone.
  await put('/api/organisations/nightshift', {
    name: 'Night shift',
    hours: { timezone: zone, windows: [{ days: [wall.day], from: hhmm(from), to: hhmm(from + 120) }] },
  });
  await account('olga', ['staff'], 'nightshift');
  await put('/api/routes/shift', { upstream: up.origin, paths: ['/shift'], rule: { roles: ['staff'] }, organisation: 'nightshift' });
  await passed(as('olga', '/shift/x'), `inside the window (${wall.day} ${hhmm(from)} in ${zone})`);
  await passed(as('olga', '/staff/x'), 'hours apply to the member everywhere, and this is inside them');
  await passed(as('bob', '/staff/x'), 'a member of no organisation has no hours');

  const moved = await call(`${c}/__clock/advance`, { method: 'POST', headers: { origin: c }, body: { by: 'PT3H' } });
  assert.equal(moved.status, 200, moved.text);
  assert.ok(moved.json.now - now >= 3 * 3600_000, `the clock moved: ${now} -> ${moved.json.now}`);
  const outside = await refused(as('olga', '/shift/x'), 403, 'outside-hours', 'three hours later, outside the window');
  assert.equal(typeof outside.json.detail, 'string');
  await refused(as('olga', '/staff/x'), 403, 'outside-hours', 'outside the hours on any protected route');
  await passed(as('bob', '/staff/x'), 'others are not affected');
  await passed(as('dave', '/acme/x'), 'an organisation without hours is always open');

  // Widen the window to the whole week: the member passes again, without waiting.
  await put('/api/organisations/nightshift', {
    name: 'Night shift',
    hours: { timezone: zone, windows: [{ days: ['MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT', 'SUN'], from: '00:00', to: '24:00' }] },
  });
  await passed(as('olga', '/shift/x'), 'a widened window applies at once');
});
