import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import { call, type Answer } from '../helpers/http.ts';

let t: TestGateway;
let root: Admin;
let billing: string;
let orders: string;
let internal: string;

before(async () => {
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual' });
  root = await signInAdmin(t.url('control'));
  internal = t.url('internal');
  await root.put('/api/roles/billing-jobs', {});
  await root.put('/api/roles/billing-admin', { implies: ['billing-jobs'] });
  await root.put('/api/roles/orders-jobs', {});
  await root.put('/api/routes/billing', { upstream: 'http://billing.internal', paths: ['/billing'] });
  await root.put('/api/routes/orders', { upstream: 'http://orders.internal', paths: ['/orders'] });
  await root.put('/api/routes/billing-back-office', { upstream: 'http://back-office.internal', paths: ['/billing/admin'] });
  await root.put('/api/organisations/acme', { name: 'Acme' });
  await root.put('/api/organisations/globex', { name: 'Globex' });
  billing = (await root.post('/api/tokens', { name: 'billing-svc', kind: 'schedules', routes: ['billing'], roles: ['billing-admin'], organisations: ['acme'] })).json.token;
  orders = (await root.post('/api/tokens', { name: 'orders-svc', kind: 'schedules', routes: ['orders'], roles: ['orders-jobs'] })).json.token;
});
after(async () => { await t?.close(); });

const as = (token: string) => ({
  post: (path: string, body?: unknown) => call(`${internal}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, ...(body !== undefined ? { body } : {}) }),
  put: (path: string, body: unknown) => call(`${internal}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body }),
  patch: (path: string, body: unknown) => call(`${internal}${path}`, { method: 'PATCH', headers: { authorization: `Bearer ${token}` }, body }),
  get: (path: string) => call(`${internal}${path}`, { headers: { authorization: `Bearer ${token}` } }),
  del: (path: string) => call(`${internal}${path}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }),
});

function refused(a: Answer, status: number, code: string, field: string | undefined, detail: RegExp): void {
  assert.equal(a.status, status, a.text);
  assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
  assert.equal(a.json.code, code, a.text);
  if (field !== undefined) assert.equal(a.json.field, field, a.text);
  assert.match(a.json.detail, detail);
}

const BASE = { routeId: 'billing', path: '/billing/close-day', every: 'PT1H', roles: ['billing-jobs'] };

test('a schedule is created with its defaults, its next turn and the token that wrote it', async () => {
  const now = (await call(`${t.url('control')}/__clock`)).json.now as number;
  const c = await as(billing).post('/api/schedules', { ...BASE, name: 'close the day', metadata: { team: 'finance' }, headers: { 'X-Api-Key': '${stripe_key}' }, body: { day: 'today' } });
  assert.equal(c.status, 201, c.text);
  assert.equal(c.headers.location, `/api/schedules/${c.json.id}`);
  assert.match(c.json.id, /^sch_[0-9a-f]{24}$/);
  const s = c.json;
  assert.equal(s.method, 'POST');
  assert.equal(s.timezone, 'UTC');
  assert.equal(s.overlap, 'skip');
  assert.equal(s.catchUp, 3600);
  assert.equal(s.timeout, 'PT30S');
  assert.equal(s.token, 'billing-svc');
  assert.deepEqual(s.headers, { 'X-Api-Key': '${stripe_key}' }, 'a vault reference is stored as written');
  assert.deepEqual(s.body, { day: 'today' });
  assert.equal(s.paused, false);
  assert.equal(s.inFlight, null);
  assert.equal(s.nextRunAt, Math.floor((now + 3_600_000) / 1000), 'every counts from now when it never ran');
  assert.deepEqual((await as(billing).get(`/api/schedules/${s.id}`)).json, s);
});

test('next turns at write time: cron on a zone\'s wall clock, and at', async () => {
  const cron = await as(billing).post('/api/schedules', { ...BASE, every: undefined, cron: '30 2 * * *', timezone: 'Europe/Paris' });
  assert.equal(cron.status, 201, cron.text);
  const next = new Date(cron.json.nextRunAt * 1000);
  const wall = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit', hour12: false }).format(next);
  assert.ok(wall === '02:30' || wall === '03:30', `02:30 Paris wall time (or 03:30 on a spring-forward day), got ${wall}`);
  const at = await as(billing).post('/api/schedules', { ...BASE, every: undefined, at: '2030-06-01T10:00:00+02:00' });
  assert.equal(at.json.nextRunAt, Date.UTC(2030, 5, 1, 8) / 1000);
});

test('every refusal has its status, code, field and sentence, and writes nothing', async () => {
  const before = (await as(billing).get('/api/schedules')).json.length;
  const api = as(billing);
  const cases: Array<[unknown, number, string, string | undefined, RegExp]> = [
    [{ ...BASE, method: 'GET' }, 400, 'schedule.method-get', 'method', /a scheduled call is an action/],
    [{ ...BASE, method: 'TRACE' }, 400, 'schedule.method-invalid', 'method', /POST, PUT, PATCH, DELETE/],
    [{ ...BASE, headers: { Authorization: 'Bearer x' } }, 400, 'schedule.header-forbidden', 'headers.Authorization', /scheduler's identity/],
    [{ ...BASE, headers: { host: 'evil' } }, 400, 'schedule.header-forbidden', 'headers.host', /the route decides/],
    [{ ...BASE, headers: { 'Gateway-Job': 'x' } }, 400, 'schedule.header-forbidden', 'headers.Gateway-Job', /the schedule id/],
    [{ ...BASE, headers: { 'gateway-job-run': 'x' } }, 400, 'schedule.header-forbidden', 'headers.gateway-job-run', /the run identifier/],
    [{ ...BASE, headers: { 'Gateway-Job-Attempt': '1' } }, 400, 'schedule.header-forbidden', 'headers.Gateway-Job-Attempt', /the attempt number/],
    [{ ...BASE, headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-H${i}`, 'v'])) }, 400, 'schedule.headers-too-many', 'headers', /at most 10/],
    [{ ...BASE, metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])) }, 400, 'schedule.metadata-too-many', 'metadata', /at most 20/],
    [{ ...BASE, every: undefined }, 400, 'schedule.cadence-count', undefined, /exactly one of every/],
    [{ ...BASE, cron: '* * * * *' }, 400, 'schedule.cadence-count', undefined, /every and cron/],
    [{ ...BASE, every: 'PT30S' }, 400, 'schedule.every-too-short', 'every', /at least one minute/],
    [{ ...BASE, every: 'an hour' }, 400, 'schedule.every-invalid', 'every', /not a valid duration/],
    [{ ...BASE, timeout: 'PT3M' }, 400, 'schedule.timeout-too-long', 'timeout', /at most two minutes/],
    [{ ...BASE, every: undefined, at: '2030-06-01T10:00:00' }, 400, 'schedule.at-offset-missing', 'at', /no offset/],
    [{ ...BASE, every: undefined, cron: '0 9 * *' }, 400, 'schedule.cron-invalid', 'cron', /cron/],
    [{ ...BASE, every: undefined, cron: '0 25 * * *' }, 400, 'schedule.cron-invalid', 'cron', /cron/],
    [{ ...BASE, every: undefined, cron: '@fortnightly' }, 400, 'schedule.cron-invalid', 'cron', /cron/],
    [{ ...BASE, every: undefined, cron: '0 9 * * MON-FRI', timezone: 'Europe/Pariss' }, 400, 'schedule.timezone-unknown', 'timezone', /not a known IANA zone/],
    [{ ...BASE, overlap: 'allow' }, 400, 'schedule.overlap-invalid', 'overlap', /skip/],
    [{ ...BASE, catchUp: -1 }, 400, 'schedule.catchup-invalid', 'catchUp', /whole number of seconds/],
    // Outside the token's routes, existing or not: the perimeter is judged first (a token that reaches
    // every route is told 404 schedule.route-unknown, scheduler-deviations.test.ts).
    [{ ...BASE, routeId: 'nowhere' }, 403, 'perimeter', 'routeId', /may not reach the route "nowhere"/],
    [{ ...BASE, routeId: 'orders', path: '/orders/x' }, 403, 'perimeter', 'routeId', /may not reach the route "orders"/],
    [{ ...BASE, roles: ['orders-jobs'] }, 403, 'perimeter', 'roles', /may not ask for "orders-jobs"/],
    [{ ...BASE, path: '/elsewhere' }, 400, 'schedule.path-invalid', 'path', /not served by the route "billing"/],
    [{ ...BASE, path: '/billing/admin/x' }, 400, 'schedule.path-invalid', 'path', /its paths are \/billing; another route serves it\)/],
    [{ ...BASE, contentType: 'a/b;\u007f' }, 400, 'field.invalid', 'contentType', /control character/],
    [{ ...BASE, organisation: 'nowhere' }, 403, 'perimeter', 'organisation', /may not act for the organisation "nowhere"/],
    // Acting for an organisation reads its vault and carries its membership: only the organisations given to the token.
    [{ ...BASE, organisation: 'globex' }, 403, 'perimeter', 'organisation', /may not act for the organisation "globex"; its organisations are acme/],
    [{ ...BASE, roles: ['a'], role: 'b' }, 400, 'schedule.roles-invalid', 'roles', /not both/],
    [{ ...BASE, colour: 'red' }, 400, 'field.invalid', 'colour', /not a field of a schedule/],
  ];
  for (const [body, status, code, field, detail] of cases) refused(await api.post('/api/schedules', body), status, code, field, detail);
  refused(await as(orders).post('/api/schedules', { ...BASE, routeId: 'orders', path: '/orders/x', roles: ['orders-jobs'], organisation: 'acme' }), 403, 'perimeter', 'organisation', /its organisations are none/);
  assert.equal((await api.get('/api/schedules')).json.length, before, 'nothing was written');
  // The role hierarchy counts: billing-admin (the token's) implies billing-jobs.
  const { roles: _roles, ...single } = BASE;
  assert.equal((await api.post('/api/schedules', { ...single, role: 'billing-admin', organisation: 'acme' })).status, 201);
});

test('filters: exact metadata, expressions, tenant and route, all conjoined; a bad expression is refused', async () => {
  const api = as(billing);
  const mk = async (metadata: Record<string, string>, organisation?: string) =>
    (await api.post('/api/schedules', { ...BASE, metadata, ...(organisation ? { organisation } : {}) })).json.id as string;
  const a = await mk({ env: 'prod-eu', team: 'ledger' }, 'acme');
  const b = await mk({ env: 'prod-us', team: 'ledger' });
  const c = await mk({ env: 'staging', team: 'ledger' });
  const ids = async (q: string) => {
    const r = await api.get(`/api/schedules?${q}`);
    assert.equal(r.status, 200, r.text);
    return r.json.map((s: { id: string }) => s.id).filter((id: string) => [a, b, c].includes(id)).sort();
  };
  assert.deepEqual(await ids('meta.team=ledger'), [a, b, c].sort());
  assert.deepEqual(await ids('meta.env=prod-eu'), [a]);
  assert.deepEqual(await ids(`meta.env=${encodeURIComponent('~^prod-')}`), [a, b].sort());
  assert.deepEqual(await ids(`meta.env=${encodeURIComponent('~^prod-')}&tenant=acme`), [a]);
  assert.deepEqual(await ids('route=billing&meta.env=staging'), [c]);
  assert.deepEqual(await ids('route=orders'), []);
  refused(await api.get(`/api/schedules?meta.env=${encodeURIComponent('~(unclosed')}`), 400, 'filter.regex-invalid', 'meta.env', /does not compile/);
  refused(await api.get(`/api/schedules?meta.env=${encodeURIComponent('~(a+)+$')}`), 400, 'filter.regex-invalid', 'meta.env', /exponential/);
  refused(await api.get('/api/schedules?tenat=acme'), 400, 'filter.invalid', 'tenat', /not a filter/);
  // A polynomial expression passes any check of its shape; against 1,024 characters a backtracking
  // engine would run it for minutes, holding every schedule of the node. It answers at once.
  const long = await mk({ env: 'a'.repeat(1024) });
  const found = async (q: string) => {
    const r = await api.get(`/api/schedules?${q}`);
    assert.equal(r.status, 200, r.text);
    return r.json.map((x: { id: string }) => x.id).filter((id: string) => id === long);
  };
  assert.deepEqual(await found(`meta.env=${encodeURIComponent('~a*a*a*a*a*!')}`), []);
  assert.deepEqual(await found(`meta.env=${encodeURIComponent('~^a*a*a*a*a*$')}`), [long]);
});

test('perimeter: a token sees and changes only the schedules it wrote; the console sees all', async () => {
  const mine = (await as(billing).post('/api/schedules', BASE)).json.id as string;
  const theirs = (await as(orders).post('/api/schedules', { routeId: 'orders', path: '/orders/sweep', every: 'PT5M', roles: ['orders-jobs'] })).json;
  assert.ok(theirs.id, JSON.stringify(theirs));
  const billingSees = (await as(billing).get('/api/schedules')).json.map((s: { id: string }) => s.id);
  assert.ok(billingSees.includes(mine));
  assert.ok(!billingSees.includes(theirs.id));
  for (const a of [
    await as(billing).get(`/api/schedules/${theirs.id}`),
    await as(billing).post(`/api/schedules/${theirs.id}/pause`),
    await as(billing).del(`/api/schedules/${theirs.id}`),
    await as(billing).put(`/api/schedules/${theirs.id}`, BASE),
    await as(billing).get(`/api/schedules/${theirs.id}/runs`),
    // Not even a replay's refusal says anything of another token's history.
    await as(billing).post(`/api/schedules/${theirs.id}/run`, { replayOf: 'run-nothing' }),
  ]) refused(a, 404, 'not-found', undefined, /yours to see/);
  const all = (await root.get('/api/schedules')).json.map((s: { id: string }) => s.id);
  assert.ok(all.includes(mine) && all.includes(theirs.id), 'root\'s console sees every schedule');
});

test('pause, resume, run now recorded, replace and delete', async () => {
  const api = as(billing);
  const s = (await api.post('/api/schedules', BASE)).json;
  const paused = await api.post(`/api/schedules/${s.id}/pause`);
  assert.equal(paused.json.paused, true);
  assert.equal(paused.json.nextRunAt, null);
  // Paused, the engine does not take the request: it stays recorded, the turn brought forward.
  const run = await api.post(`/api/schedules/${s.id}/run`);
  assert.equal(run.status, 202);
  assert.equal(run.json.runRequested.replayOf, null);
  assert.equal(run.json.nextRunAt, run.json.runRequested.at, 'run now brings the turn forward to now');
  refused(await api.post(`/api/schedules/${s.id}/run`, { replayOf: 'run-nothing' }), 400, 'field.invalid', 'replayOf', /not a turn in this schedule's history/);
  // PUT replaces every writable field (omitted ones take defaults); id and the paused state stay.
  const replaced = await api.put(`/api/schedules/${s.id}`, { routeId: 'billing', path: '/billing/other', cron: '0 9 * * MON-FRI', timezone: 'America/New_York' });
  assert.equal(replaced.status, 200, replaced.text);
  assert.equal(replaced.json.id, s.id);
  assert.equal(replaced.json.paused, true);
  assert.equal(replaced.json.every, undefined);
  assert.deepEqual(replaced.json.roles, []);
  refused(await api.put(`/api/schedules/${s.id}`, { ...BASE, method: 'GET' }), 400, 'schedule.method-get', 'method', /action/);
  assert.equal((await api.get(`/api/schedules/${s.id}`)).json.path, '/billing/other', 'a refused replacement changed nothing');
  assert.deepEqual((await api.get(`/api/schedules/${s.id}/runs`)).json, []);
  refused(await api.patch(`/api/schedules/${s.id}/run`, { run: 'nope', state: 'done' }), 404, 'not-found', undefined, /No run nope/);
  refused(await api.patch(`/api/schedules/${s.id}/run`, { run: 'nope', state: 'finished' }), 400, 'field.invalid', 'state', /running, done or failed/);
  const resumed = await api.post(`/api/schedules/${s.id}/resume`);
  assert.equal(resumed.json.paused, false);
  assert.ok(resumed.json.nextRunAt > 0);
  assert.equal((await api.del(`/api/schedules/${s.id}`)).status, 204);
  refused(await api.get(`/api/schedules/${s.id}`), 404, 'not-found', undefined, /sch_/);
  refused(await api.get(`/api/schedules/${s.id}/runs`), 404, 'not-found', undefined, /sch_/);
});

test('plane rules: tokens only on the internal plane; the console reads but does not write', async () => {
  const s = (await as(billing).post('/api/schedules', BASE)).json;
  refused(await call(`${internal}/api/schedules`), 401, 'unauthenticated', undefined, /schedules token/);
  refused(await call(`${internal}/api/schedules`, { headers: { cookie: root.headers.cookie! } }), 403, 'tokens-only', undefined, /browser session/);
  const admin = (await root.post('/api/tokens', { name: 'ops', kind: 'admin' })).json.token;
  refused(await call(`${internal}/api/schedules`, { headers: { authorization: `Bearer ${admin}` } }), 403, 'token-kind', undefined, /schedules token/);

  // The console: reads and actions, no writes; the refusal names the internal plane's address.
  assert.equal((await root.get(`/api/schedules/${s.id}`)).status, 200);
  assert.equal((await root.post(`/api/schedules/${s.id}/pause`, {})).json.paused, true);
  const host = new URL(internal).host;
  for (const a of [
    await root.post('/api/schedules', BASE),
    await root.put(`/api/schedules/${s.id}`, BASE),
    await root.patch(`/api/schedules/${s.id}/run`, { run: 'r', state: 'done' }),
    await call(`${root.control}/api/schedules`, { method: 'POST', headers: { authorization: `Bearer ${admin}` }, body: BASE }),
  ]) refused(a, 403, 'wrong-plane', undefined, new RegExp(`internal plane \\(http://${host.replace(/\./g, '\\.')}\\)`));

  // A schedules token still calling the control plane keeps working; the gateway says so once.
  const old = await call(`${root.control}/api/schedules`, { method: 'POST', headers: { authorization: `Bearer ${billing}` }, body: BASE });
  assert.equal(old.status, 201, old.text);
  await call(`${root.control}/api/schedules`, { headers: { authorization: `Bearer ${billing}` } });
  const lines = t.logs.filter((l) => l.msg.startsWith('a schedules token called the scheduling API on the control plane'));
  assert.equal(lines.length, 1, 'logged once per token');
  assert.equal(lines[0]!.attrs.token, 'billing-svc');
  assert.equal(lines[0]!.attrs.internalPlane, `http://${host}`);
  // Nothing else opens for it on the control plane.
  refused(await call(`${root.control}/api/routes`, { headers: { authorization: `Bearer ${billing}` } }), 403, 'capability', undefined, /capability/);
});

test('the internal plane serves its own OpenAPI document', async () => {
  const doc = (await call(`${internal}/api/openapi.json`)).json;
  assert.equal(doc.info.title, 'Meerkat internal plane');
  for (const p of ['/api/schedules', '/api/schedules/{id}', '/api/schedules/{id}/run', '/api/schedules/{id}/runs', '/api/schedules/{id}/pause']) assert.ok(doc.paths[p], p);
  assert.ok(doc.paths['/api/schedules'].post.requestBody);
  assert.ok(doc.components.schemas.Problem.properties.code.enum.includes('schedule.method-get'));
});
