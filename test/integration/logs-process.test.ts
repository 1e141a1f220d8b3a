/**
 * The logs of a real `meerkat start` child process, read from its standard output and standard
 * error as an operator's log agent reads them (spec 1.4, 2.7, 8, 9 rule 2): the access log on
 * standard output and the operational log on standard error, the agent mode's objects, a stalled
 * reader of standard output, and what a restart keeps of the settings.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dbEnv, createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { loopbackEnv, ROOT_PASSWORD } from '../helpers/gateway.ts';
import { personWithToken, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';
import { startProcess, type GatewayProcess } from '../helpers/process.ts';
import { startUpstream, type Upstream } from '../helpers/upstream.ts';
import { until } from '../helpers/until.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const TRACEPARENT = `00-${TRACE}-b7ad6b7169203331-01`;

type Line = Record<string, any>;

/** The startup level named: loopbackEnv's own is debug. */
function processEnv(db: TestDatabase): Record<string, string> {
  return loopbackEnv({ ...dbEnv(db), GATEWAY_LOG_LEVEL: 'info' });
}

const tag = () => randomBytes(6).toString('hex');

/** The complete lines of a stream's text (a line still being written is left out). */
function linesOf(text: string): string[] {
  const lines = text.split('\n');
  lines.pop();
  return lines.filter((l) => l !== '');
}

/** The text from the start of the line `offset` falls in: a read may have ended mid-line. */
function since(text: string, offset: number): string {
  return text.slice(text.lastIndexOf('\n', offset - 1) + 1);
}

/** Every line parsed; a line that is not one JSON object fails with the line quoted. */
function parsed(text: string, what: string): Line[] {
  return linesOf(text).map((l) => {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      assert.fail(`${what}: a line that is not JSON: ${l.slice(0, 300)}`);
    }
    assert.ok(typeof v === 'object' && v !== null && !Array.isArray(v), `${what}: not one object: ${l.slice(0, 300)}`);
    return v as Line;
  });
}


/** The access lines (startup JSON format) on standard output whose path is `path`. */
const accessLines = (gw: GatewayProcess, path: string) => parsed(gw.stdout(), 'standard output').filter((l) => l.path === path);

function assertStatus(a: Answer, status: number, what: string): Answer {
  assert.equal(a.status, status, `${what}: ${a.status} ${a.text}`);
  return a;
}

/** A process compiles through tsx and starts five worker threads: slow on a small, busy machine. */
const START_MS = 120_000;

describe('one process: the startup format first, then the agent mode, then its stop', () => {
  let db: TestDatabase;
  let up: Upstream;
  let gw: GatewayProcess;
  let root: Admin;
  let alice: string;
  let schedulesToken: string;
  const querySecret = `q-secret-${tag()}`;
  const bodySecret = `b-secret-${tag()}`;

  before(async () => {
    db = await createTestDatabase();
    up = await startUpstream();
    gw = await startProcess(processEnv(db), START_MS);
    root = await signInAdmin(gw.urls.control!);
    await putOk(root, '/api/roles/jobs', {});
    await putOk(root, '/api/routes/billing', { upstream: `${up.origin}/svc`, paths: ['/billing'], rule: { roles: ['jobs'] } });
    alice = (await personWithToken(root, 'alice', ['jobs'])).token;
    const minted = assertStatus(await root.post('/api/tokens', { name: 'billing-svc', kind: 'schedules', routes: ['*'], roles: ['jobs'] }), 201, 'schedules token');
    schedulesToken = minted.json.token;
  });
  after(async () => {
    if (gw?.child.exitCode === null) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
    await up?.close();
    await db?.drop();
  });

  test('access log on: one JSON line on standard output per request on every plane, with the fields of 2.7; the operational log stays on standard error; no body, no query string', async () => {
    const t = tag();
    const unlogged = `/nowhere/before-${t}`;
    assertStatus(await call(`${gw.urls.data}${unlogged}`), 404, 'a request while the access log is off');

    const on = assertStatus(await root.put('/api/settings/logs', { accessLog: true }), 200, 'switch on');
    assert.equal(on.json.accessLog, true);

    const refusedPath = `/nowhere/${t}`;
    assertStatus(await call(`${gw.urls.data}${refusedPath}?api_key=${querySecret}`), 404, 'no route');
    const proxiedPath = `/billing/orders/${t}`;
    assertStatus(await call(`${gw.urls.data}${proxiedPath}?api_key=${querySecret}`, {
      method: 'POST', body: { card: bodySecret }, headers: { authorization: `Bearer ${alice}`, traceparent: TRACEPARENT },
    }), 200, 'through the upstream');
    assert.match(up.last().body, new RegExp(bodySecret), 'the body did reach the service');
    assertStatus(await root.get(`/api/routes/billing?api_key=${querySecret}`), 200, 'control plane');
    assertStatus(await call(`${gw.urls.internal}/api/schedules`, { headers: { authorization: `Bearer ${schedulesToken}` } }), 200, 'internal plane');
    // Lines are written in the order the answers ended: once the fence's line is out, so are the others'.
    const fence = `/fence/${t}`;
    assertStatus(await call(`${gw.urls.data}${fence}`), 404, 'fence');
    await until(() => (accessLines(gw, fence).length > 0 ? true : undefined), 'the fence line on standard output');

    const out = parsed(gw.stdout(), 'standard output');
    assert.ok(out.length >= 5);
    for (const l of out) {
      assert.equal(l.type, 'access', `only access lines on standard output: ${JSON.stringify(l)}`);
      assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Number.isInteger(l.ms) && l.ms >= 0, `ms is an integer: ${l.ms}`);
      assert.ok(Number.isInteger(l.status));
      assert.ok(!String(l.path).includes('?'), `the path without its query string: ${l.path}`);
    }
    assert.equal(accessLines(gw, unlogged).length, 0, 'off by default: nothing was written before the switch');

    const one = (path: string, method = 'GET'): Line => {
      const found = out.filter((l) => l.path === path && l.method === method);
      assert.equal(found.length, 1, `exactly one line for ${method} ${path}: ${JSON.stringify(found)}`);
      return found[0]!;
    };
    const refused = one(refusedPath);
    assert.deepEqual({ ...refused, time: 0, ms: 0 }, {
      time: 0, type: 'access', method: 'GET', path: refusedPath, status: 404, ms: 0, outcome: 'refused', ip: '127.0.0.1', plane: 'data',
    }, 'no route, no user on a refusal by no route');
    const proxied = one(proxiedPath, 'POST');
    assert.deepEqual({ ...proxied, time: 0, ms: 0 }, {
      time: 0, type: 'access', trace_id: TRACE, method: 'POST', path: proxiedPath, route: 'billing', status: 200, ms: 0, outcome: 'ok',
      user: 'alice', token: 'alice-app', ip: '127.0.0.1', plane: 'data',
    });
    const control = one('/api/routes/billing');
    assert.equal(control.plane, 'control');
    assert.equal(control.status, 200);
    assert.equal(control.outcome, 'ok');
    assert.equal(control.user, 'root', 'the console session is the account that signed in');
    assert.equal(control.ip, '127.0.0.1');
    assert.equal(control.route, undefined, 'no route on a gateway API');
    const internal = one('/api/schedules');
    assert.equal(internal.plane, 'internal');
    assert.equal(internal.status, 200);
    assert.equal(internal.outcome, 'ok');
    assert.equal(internal.token, 'billing-svc', 'a machine called: the token is named');
    assert.equal(internal.ip, '127.0.0.1');
    one(fence);

    const err = parsed(gw.stderr(), 'standard error');
    assert.ok(err.every((l) => l.type === 'app'), 'no access line on standard error');
    assert.ok(err.some((l) => l.msg === 'access log switched on' && l.level === 'info'), 'the operational log is on standard error');
    for (const path of [refusedPath, proxiedPath, fence]) assert.ok(!gw.stderr().includes(path), `${path} is not on standard error`);
    for (const [secret, what] of [[querySecret, 'a query-string secret'], [bodySecret, 'a request body'], [ROOT_PASSWORD, 'the sign-in password']] as const) {
      assert.ok(!gw.stdout().includes(secret), `${what} is not on standard output`);
      assert.ok(!gw.stderr().includes(secret), `${what} is not on standard error`);
    }
  });

  test('agent mode: from the switch on, every line on both streams is one object with the OpenTelemetry names, the package version in its resource, the trace id of a traceparent', async () => {
    const outFrom = gw.stdout().length;
    const errFrom = gw.stderr().length;
    const put = assertStatus(await root.put('/api/settings/logs', { mode: 'agent' }), 200, 'agent mode');
    assert.equal(put.json.mode, 'agent');
    const t = tag();
    const traced = `/billing/traced/${t}`;
    const plain = `/billing/plain/${t}`;
    const refused = `/nowhere/${t}`;
    assertStatus(await call(`${gw.urls.data}${traced}?api_key=${querySecret}`, {
      method: 'POST', body: { card: bodySecret }, headers: { authorization: `Bearer ${alice}`, traceparent: TRACEPARENT },
    }), 200, 'traced');
    assertStatus(await call(`${gw.urls.data}${plain}`, { headers: { authorization: `Bearer ${alice}` } }), 200, 'untraced');
    assertStatus(await call(`${gw.urls.data}${refused}`), 404, 'refused');
    assertStatus(await root.get('/api/settings/logs'), 200, 'control plane');
    // Standard error in the new mode: the mode change, then the stop's lines, the last of all included.
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);

    const out = parsed(since(gw.stdout(), outFrom), 'standard output');
    const err = parsed(since(gw.stderr(), errFrom), 'standard error');
    // Lines handed over before the switch may still be in the startup format; none after the first agent object.
    const isAgent = (l: Line) => 'severity_text' in l;
    const outAgent = out.slice(out.findIndex(isAgent));
    const errAgent = err.slice(err.findIndex(isAgent));
    assert.ok(out.some(isAgent) && err.some(isAgent), 'agent objects on both streams');
    assert.ok(outAgent.length >= 4, `${outAgent.length} access objects`);
    assert.ok(errAgent.some((l) => l.body === 'log output mode changed'), 'standard error switches with the mode');

    const severities: Record<string, number> = { DEBUG: 5, INFO: 9, WARN: 13, ERROR: 17 };
    const check = (l: Line, stream: string) => {
      const keys = ['timestamp', 'severity_text', 'severity_number', 'body', 'attributes', 'resource', ...('trace_id' in l ? ['trace_id'] : [])];
      assert.deepEqual(Object.keys(l).sort(), keys.sort(), `${stream}: exactly the OpenTelemetry names: ${JSON.stringify(l)}`);
      assert.match(l.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(l.severity_number, severities[l.severity_text], `${stream}: severity ${l.severity_text}`);
      assert.equal(typeof l.body, 'string');
      assert.ok(typeof l.attributes === 'object' && l.attributes !== null);
      assert.equal(l.resource['service.name'], 'meerkat');
      assert.equal(l.resource['service.version'], VERSION, 'spec 9 rule 2: the package version');
      if ('trace_id' in l) assert.match(l.trace_id, /^[0-9a-f]{32}$/);
    };
    for (const l of outAgent) {
      check(l, 'standard output');
      assert.equal(l.attributes.type, 'access');
    }
    for (const l of errAgent) {
      check(l, 'standard error');
      assert.equal(l.attributes.type, 'app');
    }
    const byPath = (path: string) => {
      const found = outAgent.filter((l) => l.attributes.path === path);
      assert.equal(found.length, 1, `one object for ${path}`);
      return found[0]!;
    };
    const tracedLine = byPath(traced);
    assert.equal(tracedLine.trace_id, TRACE, 'the trace id of the traceparent');
    assert.equal(tracedLine.body, `POST ${traced} 200`);
    assert.deepEqual(
      { ...tracedLine.attributes, ms: 0 },
      { type: 'access', method: 'POST', path: traced, route: 'billing', status: 200, ms: 0, outcome: 'ok', user: 'alice', token: 'alice-app', ip: '127.0.0.1', plane: 'data' },
    );
    assert.equal('trace_id' in byPath(plain), false, 'no traceparent, no trace_id');
    assert.equal(byPath(refused).attributes.outcome, 'refused');
    assert.ok(errAgent.some((l) => l.body === 'gateway stopped'), 'the last line of the stop is an agent object too');
    for (const secret of [querySecret, bodySecret]) {
      assert.ok(!gw.stdout().includes(secret) && !gw.stderr().includes(secret), 'no body, no query string');
    }
  });
});

test('standard output stalls: every request is still answered, access lines are dropped and counted, and they flow again once read', async (t) => {
  const db = await createTestDatabase();
  const gw = await startProcess(processEnv(db), START_MS, { readStdout: false });
  try {
    const root = await signInAdmin(gw.urls.control!);
    assertStatus(await root.put('/api/settings/logs', { accessLog: true }), 200, 'switch on');
    // Long paths make long lines: the pipe (about 64 KiB) and then the shipper's bounded ring fill
    // with thousands of requests rather than tens of thousands.
    const filler = 'x'.repeat(2000);
    let slowest = 0;
    let sent = 0;
    const timed = async (url: string, status: number) => {
      const started = Date.now();
      const a = await call(url);
      const ms = Date.now() - started;
      slowest = Math.max(slowest, ms);
      assert.equal(a.status, status, `${url.slice(0, 80)}: ${a.status}`);
      assert.ok(ms < 5000, `answered in ${ms} ms`);
    };
    const burst = async (count: number) => {
      const workers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = w; i < count; i += 16) {
          await timed(`${gw.urls.data}/stalled/${filler}/${sent + i}`, 404);
          if (i % 200 === 0) await timed(`${gw.urls.control}/healthz`, 200);
        }
      });
      await Promise.all(workers);
      sent += count;
    };
    const dropped = async () => {
      const a = assertStatus(await root.get('/api/settings/logs'), 200, 'settings');
      return a.json.droppedRecords.access as number;
    };
    // Bounded: 32 MiB waiting is about 16,000 of these lines; 40,000 requests is more than twice that.
    while ((await dropped()) === 0 && sent < 40_000) await burst(1000);
    const lost = await dropped();
    assert.ok(lost > 0, `access lines dropped and counted after ${sent} requests`);
    assert.ok(sent >= 15_000, `${sent} requests: the gateway held about 32 MiB of lines before it dropped`);
    // Dropping, the gateway still answers at once on both planes.
    await burst(500);
    assert.ok((await dropped()) >= lost);
    await until(() => (/standard output is not taking lines fast enough/.test(gw.stderr()) ? true : undefined), 'the drop is reported on standard error');

    gw.readStdout();
    const marker = `/after/${tag()}`;
    // Lines flow again: new requests' lines reach standard output once the backlog is written.
    await until(async () => {
      await timed(`${gw.urls.data}${marker}`, 404);
      return gw.stdout().includes(`"path":"${marker}"`) ? true : undefined;
    }, 'a new access line on standard output after the reader came back', 60_000);
    await until(() => (/standard output takes lines again/.test(gw.stderr()) ? true : undefined), 'the recovery is reported');
    // What was written is whole lines, none torn by the stall.
    const lines = parsed(gw.stdout(), 'standard output');
    assert.ok(lines.every((l) => l.type === 'access'));
    assert.ok(lines.length < sent, `${lines.length} lines written of ${sent + 1} requests`);
    t.diagnostic(`stalled output: ${sent} requests, ${await dropped()} access lines dropped, ${lines.length} written, slowest answer ${slowest} ms`);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  } finally {
    if (gw.child.exitCode === null) {
      gw.child.kill('SIGKILL');
      await gw.exited;
    }
    await db.drop();
  }
});

test('a restart returns to the startup level; the access log switch and the output mode are kept', async () => {
  const db = await createTestDatabase();
  let gw: GatewayProcess | undefined;
  try {
    gw = await startProcess(processEnv(db), START_MS);
    let root = await signInAdmin(gw.urls.control!);
    const set = assertStatus(await root.put('/api/settings/logs', { level: 'debug', accessLog: true, mode: 'agent' }), 200, 'set');
    assert.equal(set.json.level, 'debug');
    assert.equal(set.json.startupLevel, 'info');
    const left = set.json.revertsAt * 1000 - Date.now();
    assert.ok(left > 29 * 60_000 && left <= 30 * 60_000, `reverts in 30 minutes (${left} ms)`);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);

    gw = await startProcess(processEnv(db), START_MS);
    root = await signInAdmin(gw.urls.control!);
    const after = assertStatus(await root.get('/api/settings/logs'), 200, 'after the restart').json;
    assert.equal(after.level, 'info', 'GATEWAY_LOG_LEVEL again');
    assert.equal(after.startupLevel, 'info');
    assert.equal(after.revertsAt, null);
    assert.equal(after.accessLog, true, 'kept');
    assert.equal(after.mode, 'agent', 'kept');
    // Kept in what is written too: an access object, and no debug record.
    const path = `/nowhere/${tag()}`;
    assertStatus(await call(`${gw.urls.data}${path}`), 404, 'refused');
    const line = await until(() => parsed(gw!.stdout(), 'standard output').find((l) => l.attributes?.path === path), 'the access object');
    assert.equal(line.resource['service.version'], VERSION);
    assert.doesNotMatch(gw.stderr(), /"severity_text":"DEBUG"|"level":"debug"/);
    gw.child.kill('SIGTERM');
    assert.equal(await gw.exited, 0);
  } finally {
    if (gw && gw.child.exitCode === null) {
      gw.child.kill('SIGKILL');
      await gw.exited;
    }
    await db.drop();
  }
});
