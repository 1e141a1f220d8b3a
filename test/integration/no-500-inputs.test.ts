/**
 * Every field of every input, given every wrong JSON type and every name an object inherits:
 * schedules, run requests and reports, list filters and query parameters, and the control
 * plane's resources. Each answer is below 500, and a refusal is a sentence: it never shows a
 * function's source or an object's default text (what reading a caller's value as text gives).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';

let t: TestGateway;
let root: Admin;
let token: string;
let scheduleId: string;
let accountId: string;

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  root = await signInAdmin(t.url('control'));
  await root.put('/api/roles/r1', {});
  await root.put('/api/organisations/o1', { name: 'O1' });
  // Never proxied: nothing in this file calls the data plane.
  await root.put('/api/routes/fuzz', { upstream: 'http://127.0.0.1:9', paths: ['/fuzz-only'] });
  token = (await root.post('/api/tokens', { name: 'fuzz-svc', kind: 'schedules', routes: ['*'], roles: ['r1'], organisations: ['*'] })).json.token;
  scheduleId = (await internal('POST', '/api/schedules', SCHEDULE)).json.id;
  accountId = (await root.post('/api/accounts', { name: 'fuzz-person', password: 'long-enough-password' })).json.id;
});
after(async () => { await t?.close(); });

const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'];

/** An object whose own keys are `entries`: `__proto__` stays an ordinary key, as JSON.parse makes it. */
function own(entries: Array<[string, unknown]>): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

const WRONG: unknown[] = [
  {}, { toString: 'x' }, { valueOf: 'x', toString: 'y' }, own([['__proto__', { polluted: true }]]),
  [], ['x'], [{}], [null], 0, -1, 1.5, 1e308, true, false, null,
  { a: { b: [null, { c: {} }] } }, '', '__proto__', 'constructor', 'toString',
  // No store keeps a NUL in text; a document nested thousands deep overflows whatever walks it next.
  'a\u0000b', own([['a\u0000', 1]]), JSON.parse(`${'['.repeat(3000)}${']'.repeat(3000)}`),
];

const SCHEDULE = {
  name: 'n', roles: ['r1'], method: 'POST', routeId: 'fuzz', path: '/fuzz-only/x', every: 'PT1H', timezone: 'UTC',
  headers: { 'X-A': 'b' }, body: { a: 1 }, contentType: 'application/json', metadata: { team: 'x' }, overlap: 'skip',
  catchUp: 60, timeout: 'PT10S', organisation: 'o1',
};

type Path = ReadonlyArray<string | number>;

/** A copy of `base` with `value` at `path` (own keys throughout). */
function setAt(base: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (Array.isArray(base)) {
    const copy = [...base];
    copy[head as number] = setAt(copy[head as number], rest, value);
    return copy;
  }
  const obj = (base ?? {}) as Record<string, unknown>;
  return own([...Object.entries(obj).filter(([k]) => k !== head), [head as string, setAt(obj[head as string], rest, value)]]);
}

/** Every wrong value at every path, plus every inherited name as a field of each object on the way. */
function variants(base: Record<string, unknown>, paths: readonly Path[]): unknown[] {
  const out: unknown[] = [...WRONG];
  for (const path of [[], ...paths] as Path[]) {
    if (path.length > 0) for (const w of WRONG) out.push(setAt(base, path, w));
    for (const k of PROTO_KEYS) out.push(setAt(base, [...path, k], 'x'));
  }
  return out;
}

function internal(method: string, path: string, body?: unknown): Promise<Answer> {
  return call(`${t.url('internal')}${path}`, { method, headers: { authorization: `Bearer ${token}` }, ...(body !== undefined ? { body } : {}) });
}
function control(method: string, path: string, body?: unknown): Promise<Answer> {
  return call(`${t.url('control')}${path}`, { method, headers: root.headers, ...(body !== undefined ? { body } : {}) });
}

function judge(what: string, a: Answer): void {
  assert.ok(a.status < 500, `${what} -> ${a.status} ${a.text}`);
  if (a.status >= 400) {
    assert.match(String(a.headers['content-type']), /^application\/problem\+json/, `${what}: ${a.text}`);
    assert.equal(typeof a.json?.code, 'string', `${what}: ${a.text}`);
    assert.equal(typeof a.json?.detail, 'string', `${what}: ${a.text}`);
    assert.doesNotMatch(a.json.detail, /function|\[native code\]|\[object Object\]/, `${what}: ${a.text}`);
  }
}

async function fuzz(send: (method: string, path: string, body?: unknown) => Promise<Answer>, method: string, url: string, base: Record<string, unknown>, paths: readonly Path[]): Promise<number> {
  let n = 0;
  for (const body of variants(base, paths)) {
    judge(`${method} ${url} ${JSON.stringify(body)?.slice(0, 300)}`, await send(method, url, body));
    n++;
  }
  return n;
}

const fieldsOf = (o: Record<string, unknown>): Path[] => Object.keys(o).map((k) => [k]);

test('schedule writes: every field, nested names, and inherited names as keys', async () => {
  const paths: Path[] = [...fieldsOf(SCHEDULE), ['headers', 'X-A'], ['metadata', 'team'], ['roles', 0], ['role']];
  const n = await fuzz(internal, 'POST', '/api/schedules', SCHEDULE, paths)
    + await fuzz(internal, 'PUT', `/api/schedules/${scheduleId}`, SCHEDULE, paths);
  assert.ok(n > 800, `${n} requests`);
  // The cadence fields each alone, so the value reaches its own parser.
  const { every: _every, ...noCadence } = SCHEDULE;
  for (const field of ['cron', 'at'] as const) {
    for (const w of WRONG) judge(`${field}=${JSON.stringify(w)}`, await internal('POST', '/api/schedules', { ...noCadence, [field]: w }));
  }
});

test('run requests and run reports: every field and inherited names', async () => {
  await fuzz(internal, 'POST', `/api/schedules/${scheduleId}/run`, { replayOf: 'run-0' }, [['replayOf']]);
  await fuzz(internal, 'PATCH', `/api/schedules/${scheduleId}/run`, { run: 'run_0', state: 'failed', progress: 1, detail: 'd', retryIn: 'PT5M' }, fieldsOf({ run: 0, state: 0, progress: 0, detail: 0, retryIn: 0 }));
});

test('query parameters and path segments with inherited names', async () => {
  const texts = ['x', '~x', '~native', '~function', '~(', '', ...PROTO_KEYS];
  for (const send of [internal, control]) {
    for (const k of PROTO_KEYS) {
      for (const v of texts) {
        const value = encodeURIComponent(v);
        for (const q of [`${k}=${value}`, `meta.${k}=${value}`, `tenant=${k}`, `route=${k}`, `meta.team=${value}&${k}=1`]) {
          judge(`GET /api/schedules?${q}`, await send('GET', `/api/schedules?${q}`));
        }
      }
      judge(`runs ${k}`, await send('GET', `/api/schedules/${scheduleId}/runs?${k}=1`));
      for (const path of [`/api/schedules/${k}`, `/api/schedules/${k}/runs`]) judge(path, await send('GET', path));
      for (const action of ['pause', 'resume', 'run']) judge(`${k}/${action}`, await send('POST', `/api/schedules/${k}/${action}`));
    }
    for (const w of ['x', '-1', '1.5', '1e3', '0x10', '', '__proto__', '99999999999999999999']) {
      judge(`runs limit ${w}`, await send('GET', `/api/schedules/${scheduleId}/runs?limit=${encodeURIComponent(w)}&before=${encodeURIComponent(w)}`));
    }
  }
  // A NUL in any name, filter or path segment of the control and internal APIs.
  for (const path of ['/api/schedules/%00', '/api/schedules?route=%00', '/api/schedules?tenant=a%00b', '/api/schedules?meta.%00=1', '/api/audit?q=a%00b',
    '/api/audit?actor=%00', '/api/audit?target=%00', '/api/audit?organisation=%00', '/api/routes/a%00b', '/api/accounts/%00', '/api/organisations/%00/vault', '/api/logs?q=%00']) {
    const a = await control('GET', path);
    judge(`GET ${path}`, a);
    assert.equal(a.status, 400, `GET ${path}: ${a.text}`);
    judge(`internal GET ${path}`, await internal('GET', path));
  }
  for (const k of PROTO_KEYS) {
    for (const path of [`/api/logs?${k}=x`, `/api/logs?level=${k}`, `/api/logs?limit=${k}`, `/api/logs/export?q=${k}`, `/api/logs/live?${k}=x`, `/api/routes/${k}`, `/api/roles/${k}`, `/api/accounts/${k}`, `/api/organisations/${k}`, `/api/organisations/${k}/vault`, `/api/schedules/live?${k}=x`, `/api/accounts?${k}=x`, `/api/routes?${k}=x`]) {
      judge(`GET ${path}`, await control('GET', path));
    }
    judge(`DELETE token ${k}`, await control('DELETE', `/api/tokens/${k}`));
  }
});

test('control-plane inputs: routes, roles, accounts, tokens, organisations, vault, settings, session, clock', async () => {
  const route = {
    upstream: 'http://127.0.0.1:9', paths: ['/fuzz-only'], hosts: ['fuzz.example'], stripPrefix: false, rule: { roles: ['r1'] },
    endpointRules: [{ method: 'GET', path: '/fuzz-only/{id}', roles: ['r1'] }], identity: 'headers', timeout: 'PT5S', openapi: { openapi: '3.1.0' }, organisation: 'o1',
  };
  await fuzz(control, 'PUT', '/api/routes/fuzz-2', route, [...fieldsOf(route), ['paths', 0], ['hosts', 0], ['rule', 'roles'], ['rule', 'roles', 0],
    ['endpointRules', 0], ['endpointRules', 0, 'method'], ['endpointRules', 0, 'path'], ['endpointRules', 0, 'roles']]);
  await fuzz(control, 'PUT', '/api/roles/fuzz-role', { implies: ['r1'] }, [['implies'], ['implies', 0]]);
  const account = { name: 'fuzz-new', password: 'long-enough-password', roles: ['r1'], capabilities: ['app-admin'], organisation: 'o1', disabled: false };
  await fuzz(control, 'POST', '/api/accounts', account, [...fieldsOf(account), ['roles', 0], ['capabilities', 0]]);
  const { name: _n, ...change } = account;
  await fuzz(control, 'PATCH', `/api/accounts/${accountId}`, change, fieldsOf(change));
  await fuzz(control, 'POST', '/api/tokens', { name: 'fuzz-token', kind: 'schedules', routes: ['fuzz'], roles: ['r1'] }, [['name'], ['kind'], ['routes'], ['roles'], ['routes', 0], ['roles', 0]]);
  await fuzz(control, 'POST', '/api/tokens', { name: 'fuzz-token', kind: 'personal', account: 'fuzz-person' }, [['account']]);
  const org = { name: 'O', hours: { timezone: 'UTC', windows: [{ days: ['MON'], from: '09:00', to: '17:00' }] } };
  await fuzz(control, 'PUT', '/api/organisations/o1', org, [['name'], ['hours'], ['hours', 'timezone'], ['hours', 'windows'], ['hours', 'windows', 0],
    ['hours', 'windows', 0, 'days'], ['hours', 'windows', 0, 'days', 0], ['hours', 'windows', 0, 'from'], ['hours', 'windows', 0, 'to']]);
  await fuzz(control, 'PUT', '/api/vault/fuzz_v', { value: 'secret' }, [['value']]);
  await fuzz(control, 'PUT', '/api/organisations/o1/vault/fuzz_v', { value: 'secret' }, [['value']]);
  await fuzz(control, 'PUT', '/api/settings/schedules', { retention: 'P30D' }, [['retention']]);
  await fuzz(control, 'PUT', '/api/settings/logs', { level: 'info', accessLog: false, mode: 'startup' }, [['level'], ['accessLog'], ['mode']]);
  await fuzz(control, 'POST', '/api/session', { name: 'fuzz-nobody', password: 'not-the-password', code: '123456' }, [['name'], ['password'], ['code']]);
  // The test clock: `by` never holds a valid duration here except PT0S, so time stays put.
  await fuzz(control, 'POST', '/__clock/advance', { by: 'PT0S' }, [['by']]);
  assert.equal(t.logs.filter((r) => r.msg === 'request failed').length, 0, 'no handler failed');
});

test('a member written twice in one object of a body is refused by name, and what was stored stays as it was', async () => {
  const before = (await internal('GET', `/api/schedules/${scheduleId}`)).json;
  const text = JSON.stringify({ ...SCHEDULE, metadata: { team: 'a' } }).replace('"team":"a"', '"team":"a","team":"b"');
  const a = await call(`${t.url('internal')}/api/schedules/${scheduleId}`, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, raw: text });
  judge('PUT twice', a);
  assert.equal(a.status, 400, a.text);
  assert.deepEqual([a.json.code, a.json.field], ['field.invalid', 'metadata.team']);
  assert.match(a.json.detail, /written twice/);
  assert.deepEqual((await internal('GET', `/api/schedules/${scheduleId}`)).json, before, 'the stored schedule is unchanged');
  const settings = await call(`${t.url('control')}/api/settings/logs`, { method: 'PUT', headers: { ...root.headers, 'content-type': 'application/json' }, raw: '{"level":"info","level":"debug"}' });
  assert.deepEqual([settings.status, settings.json.field], [400, 'level']);
});

test('half a surrogate pair in a string or a key of a body is refused by field, and what was stored stays as it was', async () => {
  const before = (await internal('GET', `/api/schedules/${scheduleId}`)).json;
  for (const [field, body] of [
    ['name', { ...SCHEDULE, name: 'nightly \ud800' }],
    ['metadata.team', { ...SCHEDULE, metadata: { team: '\udc00x' } }],
    ['metadata', { ...SCHEDULE, metadata: { ['t\udbff']: 'x' } }],
  ] as const) {
    const a = await internal('PUT', `/api/schedules/${scheduleId}`, body);
    judge(`PUT ${field}`, a);
    assert.equal(a.status, 400, a.text);
    assert.equal(a.json.code, 'field.invalid');
    assert.equal(a.json.field, field);
    assert.match(a.json.detail, /surrogate pair/);
  }
  assert.deepEqual((await internal('GET', `/api/schedules/${scheduleId}`)).json, before, 'the stored schedule is unchanged');
  const role = await control('PUT', '/api/organisations/o-pair', { name: 'pair \ud83d\ude00' });
  assert.equal(role.status < 300, true, `a whole pair is text: ${role.text}`);
  assert.equal((await control('GET', '/api/organisations/o-pair')).json.name, 'pair \ud83d\ude00');
});
