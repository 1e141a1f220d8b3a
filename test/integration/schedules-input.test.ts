/**
 * What a schedule may say, judged when it is written: headers only the gateway writes, paths that
 * would leave the route, names that look like an object's own machinery, and a run report's
 * retryIn (clamped, never refused).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestGateway } from '../helpers/gateway.ts';
import type { Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { internalWith, schedulingStand, schedulesToken } from '../helpers/scheduler.ts';
import type { Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let root: Admin;
let up: Upstream;
let token: string;

before(async () => {
  ({ t, up, root } = await schedulingStand());
  await root.put('/api/roles/jobs', {});
  await root.put('/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
  await root.put('/api/routes/admin', { upstream: `${up.origin}/admin`, paths: ['/admin'] });
  token = await schedulesToken(root, 'billing-svc', ['billing'], ['jobs']);
});
after(async () => {
  await t?.close();
  await up?.close();
});

const internal = internalWith(() => t.url('internal'), () => token);
const BASE = { routeId: 'billing', path: '/billing/close', every: 'PT1H', roles: ['jobs'] };

/** A JSON body whose objects may hold `__proto__` as an ordinary key. */
const raw = (method: string, path: string, json: string): Promise<Answer> =>
  call(`${t.url('internal')}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, raw: json });

function refused(a: Answer, code: string, field: string, detail: RegExp): void {
  assert.equal(a.status, 400, a.text);
  assert.equal(a.json.code, code, a.text);
  assert.equal(a.json.field, field, a.text);
  assert.match(a.json.detail, detail);
}

test('headers the gateway writes itself are refused at write time, each with its reason', async () => {
  const cases: Array<[string, RegExp]> = [
    ['X-Gateway-User', /X-Gateway-User is refused: the gateway writes the identity/],
    ['X-Gateway-Roles', /ask for roles instead/],
    ['x-gateway-organisation', /identity/],
    ['X-Gateway-Identity', /identity/],
    ['Remote-User', /Remote-User is refused/],
    ['X-Forwarded-For', /proxy chain/],
    ['X-Forwarded-Client-Cert', /proxy chain/],
    ['Forwarded', /proxy chain/],
    ['X-Real-IP', /proxy chain/],
    ['Connection', /one connection/],
    ['Keep-Alive', /one connection/],
    ['TE', /one connection/],
    ['Upgrade', /one connection/],
    ['Proxy-Authorization', /one connection/],
    ['Content-Length', /frames each call's body/],
  ];
  for (const [name, reason] of cases) {
    refused(await internal('POST', '/api/schedules', { ...BASE, headers: { [name]: 'root' } }), 'schedule.header-forbidden', `headers.${name}`, reason);
  }
  // The gateway's own session cookies never travel to a service, in any spelling of the header.
  for (const [name, value] of [['Cookie', 'mk_app=mks_abc'], ['cookie', 'theme=dark; mk_session=x; b=2'], ['COOKIE', ' mk_app = y']] as const) {
    refused(await internal('POST', '/api/schedules', { ...BASE, headers: { [name]: value } }), 'schedule.header-forbidden', `headers.${name}`, /a session of the gateway itself/);
  }
  assert.equal((await internal('POST', '/api/schedules', { ...BASE, headers: { Cookie: 'theme=dark; mk_apple=1' } })).status, 201, 'another cookie is the service\'s');
  const ok = await internal('POST', '/api/schedules', { ...BASE, headers: { 'X-Tenant': 'acme' } });
  assert.equal(ok.status, 201, ok.text);
  refused(await internal('PUT', `/api/schedules/${ok.json.id}`, { ...BASE, headers: { 'X-Gateway-User': 'root' } }), 'schedule.header-forbidden', 'headers.X-Gateway-User', /identity/);
});

test('a path that climbs out of the route is refused; the path is stored canonical and judged so', async () => {
  for (const path of ['/billing/../admin/secret', '/billing/%2e%2e/admin/secret', '/billing/%2E%2e/admin', '/billing/./close', '/billing//..//admin']) {
    refused(await internal('POST', '/api/schedules', { ...BASE, path }), 'schedule.path-invalid', 'path', /holds a "\." or "\.\." segment/);
  }
  const merged = await internal('POST', '/api/schedules', { ...BASE, path: '//billing///close?day=a//b' });
  assert.equal(merged.status, 201, merged.text);
  assert.equal(merged.json.path, '/billing/close?day=a//b');
  // `//admin` is `/admin` once merged: the route check judges that, not the text as written.
  refused(await internal('POST', '/api/schedules', { ...BASE, path: '//admin/secret' }), 'schedule.path-invalid', 'path', /The path \/admin\/secret is not served by the route "billing"/);
});

test('names like __proto__ and constructor are kept as names in headers and metadata, and filters never read inherited values', async () => {
  const created = await raw('POST', '/api/schedules', JSON.stringify(BASE).replace(/}$/,
    ',"headers":{"__proto__":"h1","constructor":"h2","toString":"h3"},"metadata":{"__proto__":"m1","constructor":"m2","valueOf":"m3","hasOwnProperty":"m4"}}'));
  assert.equal(created.status, 201, created.text);
  const s = (await internal('GET', `/api/schedules/${created.json.id}`)).json;
  const headers = JSON.parse((await internal('GET', `/api/schedules/${created.json.id}`)).text).headers as Record<string, string>;
  // PostgreSQL's jsonb keeps keys in its own order.
  assert.deepEqual(Object.keys(headers).sort(), ['__proto__', 'constructor', 'toString']);
  assert.equal(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value, 'h1', 'stored and answered as a key');
  assert.equal(s.metadata.constructor, 'm2');
  assert.equal(s.metadata.valueOf, 'm3');

  const list = async (query: string) => {
    const a = await internal('GET', `/api/schedules?${query}`);
    assert.equal(a.status, 200, a.text);
    return (a.json as Array<{ id: string }>).map((x) => x.id);
  };
  assert.deepEqual(await list('meta.__proto__=m1'), [s.id]);
  assert.deepEqual(await list('meta.constructor=m2'), [s.id]);
  assert.ok((await list('meta.team=~.')).every((id) => id !== s.id));
  // Another schedule has no such keys: an inherited function must not match an expression.
  const plain = (await internal('POST', '/api/schedules', BASE)).json.id as string;
  for (const q of ['meta.constructor=~native', 'meta.toString=~function', 'meta.__proto__=~object', 'meta.hasOwnProperty=~.']) {
    assert.ok(!(await list(q)).includes(plain), q);
  }
  // An own `__proto__` header reaches the service as a header, like any other name.
  await internal('POST', `/api/schedules/${s.id}/run`);
  for (let i = 0; i < 200 && !up.requests.some((r) => r.headers['gateway-job'] === s.id); i++) await new Promise((res) => setTimeout(res, 25));
  const got = up.requests.find((r) => r.headers['gateway-job'] === s.id);
  assert.ok(got, 'the call went out');
  const sent = new Map<string, string>();
  for (let i = 0; i < got.rawHeaders.length; i += 2) sent.set(got.rawHeaders[i]!.toLowerCase(), got.rawHeaders[i + 1]!);
  assert.equal(sent.get('__proto__'), 'h1');
  assert.equal(sent.get('constructor'), 'h2');
});

test('a value of the wrong type answers 400 with a sentence, never 500', async () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...BASE, every: { toString: 'x' } }, 'every'],
    [{ ...BASE, every: ['PT1H'] }, 'every'],
    [{ ...BASE, every: undefined, cron: { toString: 'x' } }, 'cron'],
    [{ ...BASE, every: undefined, at: 1_700_000_000 }, 'at'],
    [{ ...BASE, timeout: { valueOf: 5 } }, 'timeout'],
    [{ ...BASE, timezone: ['UTC'] }, 'timezone'],
    [{ ...BASE, headers: { constructor: 5 } }, 'headers.constructor'],
    [{ ...BASE, metadata: { toString: {} } }, 'metadata.toString'],
  ];
  for (const [body, field] of cases) {
    const a = await internal('POST', '/api/schedules', body);
    assert.equal(a.status, 400, `${JSON.stringify(body)}: ${a.text}`);
    assert.equal(a.json.field, field, a.text);
    assert.doesNotMatch(a.json.detail, /function|native code|object Object/, a.text);
  }
});

test('a report\'s retryIn takes any ISO 8601 duration and is clamped: P1M puts the turn off a day, PT0.5S a minute', async () => {
  up.handle((_req, res) => { res.writeHead(202); res.end(); });
  try {
    for (const [retryIn, delayS] of [['P1M', 86_400], ['PT0.5S', 60], ['P1Y', 86_400], ['P0.5D', 43_200], ['-PT5M', 60]] as const) {
      const s = (await internal('POST', '/api/schedules', { ...BASE, path: `/billing/long-${delayS}`, every: 'PT6H' })).json;
      await internal('POST', `/api/schedules/${s.id}/run`);
      let flight: Record<string, any> | null = null;
      for (let i = 0; i < 200 && flight?.phase !== 'accepted'; i++) {
        flight = (await internal('GET', `/api/schedules/${s.id}`)).json.inFlight;
        if (flight?.phase !== 'accepted') await new Promise((res) => setTimeout(res, 25));
      }
      assert.equal(flight?.phase, 'accepted');
      const report = await internal('PATCH', `/api/schedules/${s.id}/run`, { run: flight!.runId, state: 'failed', detail: 'the ledger is not ready', retryIn });
      assert.equal(report.status, 200, `${retryIn}: ${report.text}`);
      assert.equal(report.json.deferrals, 1, retryIn);
      assert.equal(report.json.nextRunAt, report.json.lastRun.endedAt + delayS, `${retryIn} puts the turn off ${delayS} s`);
    }
    const s = (await internal('POST', '/api/schedules', { ...BASE, path: '/billing/long-bad', every: 'PT6H' })).json;
    const bad = await internal('PATCH', `/api/schedules/${s.id}/run`, { run: 'run_x', state: 'failed', retryIn: 'in a while' });
    refused(bad, 'field.invalid', 'retryIn', /^retryIn is not an ISO 8601 duration: /);
  } finally {
    up.handle(undefined);
  }
});

test('bytes that are not UTF-8, in the body or a filter, are refused: nothing is stored as U+FFFD', async () => {
  const before = (await internal('GET', '/api/schedules')).json.length;
  const body = Buffer.concat([Buffer.from(JSON.stringify({ ...BASE, path: '/billing/latin1', metadata: { team: 'caf' } }).slice(0, -3)), Buffer.from([0xe9]), Buffer.from('"}}')]);
  const a = await call(`${t.url('internal')}/api/schedules`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, raw: body });
  assert.equal(a.status, 400, a.text);
  assert.equal(a.json.code, 'body.invalid-json', a.text);
  assert.match(a.json.detail, /not valid UTF-8/);
  assert.equal((await internal('GET', '/api/schedules')).json.length, before, 'nothing stored');
  // Well-formed UTF-8 is kept as sent.
  const ok = await internal('POST', '/api/schedules', { ...BASE, path: '/billing/utf8', metadata: { team: 'café' } });
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.metadata.team, 'café');
  refused(await internal('GET', '/api/schedules?meta.team=caf%E9'), 'field.invalid', 'meta.team', /percent-encoded bytes that are not UTF-8/);
  const found = await internal('GET', '/api/schedules?meta.team=caf%C3%A9');
  assert.deepEqual(found.json.map((x: { id: string }) => x.id), [ok.json.id]);
  // A % without two hex digits is text, as before.
  assert.equal((await internal('GET', '/api/schedules?meta.team=100%')).status, 200);
});

test('a filter given twice is refused, naming it; a 401 names the Bearer scheme', async () => {
  refused(await internal('GET', '/api/schedules?meta.team=a&meta.team=b'), 'filter.invalid', 'meta.team', /given once/);
  refused(await internal('GET', '/api/schedules?tenant=a&tenant=b'), 'filter.invalid', 'tenant', /given once/);
  const anonymous = await call(`${t.url('internal')}/api/schedules`);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.headers['www-authenticate'], 'Bearer realm="meerkat"');
});
