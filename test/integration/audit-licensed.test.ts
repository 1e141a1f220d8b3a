/**
 * The trail's licensed features through a real gateway: the collector push to a real OTLP/HTTP
 * receiver on loopback (spec 1.3 rule 11), and the CSV export within the caller's perimeter
 * (rule 16).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { adminWith, signInAdmin, putOk, type Admin } from '../helpers/admin.ts';
import { call } from '../helpers/http.ts';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedLog } from '../helpers/otlp-receiver.ts';

let t: TestGateway;
let otlp: OtlpReceiver;
let root: Admin;
let control: string;

before(async () => {
  otlp = await startOtlpReceiver();
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_EDITION: 'licensed', GATEWAY_OTLP_ENDPOINT: otlp.url });
  control = t.url('control');
  // A token: the test clock moves, and sessions would expire.
  const session = await signInAdmin(control);
  const minted = await session.post('/api/tokens', { name: 'auditor', kind: 'admin' });
  root = adminWith(control, { authorization: `Bearer ${minted.json.token}` });
});
after(async () => {
  await t.close();
  await otlp.close();
});

const settle = () => t.gw.ctx.audit.call('audit.settle', null);
const advance = (by: string) => call(`${control}/__clock/advance`, { method: 'POST', body: { by }, headers: root.headers });

/** Moves the clock past the push's batch interval until `pred` holds on what arrived. */
async function received(pred: (logs: ReceivedLog[]) => boolean): Promise<ReceivedLog[]> {
  for (let i = 0; i < 200 && !pred(otlp.logs); i++) {
    await settle();
    await advance('PT2S');
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(pred(otlp.logs), `not received: ${JSON.stringify(otlp.logs.map((l) => l.body))}`);
  return otlp.logs;
}

function account(name: string, body: Record<string, unknown> = {}) {
  return root.post('/api/accounts', { name, password: `${name}-password-1`, ...body });
}

test('the push sends the streams switched on, each line as an OpenTelemetry log of the audit stream', async () => {
  const off = (await root.get('/api/settings/audit')).json;
  assert.deepEqual(off.push, { audit: false, console: false });
  await putOk(root, '/api/routes/before-push', { upstream: 'http://127.0.0.1:9', paths: ['/before'] });

  for (const [push, field] of [[null, 'push'], [[true], 'push'], [{ audit: true, cosnole: true }, 'push.cosnole']] as const) {
    const bad = await root.put('/api/settings/audit', { push });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.field, field, 'the field named is the one at fault');
  }
  const on = await root.put('/api/settings/audit', { push: { audit: true } });
  assert.equal(on.status, 200, on.text);
  assert.deepEqual(on.json.push, { audit: true, console: false });
  await putOk(root, '/api/organisations/acme', { name: 'Acme' });
  assert.equal((await account('alice', { organisation: 'acme' })).status, 201);
  const data = t.url('data');
  const signin = await call(`${data}/.meerkat/session`, {
    method: 'POST', body: { name: 'alice', password: 'alice-password-1' },
    headers: { origin: data, traceparent: '00-11112222333344445555666677778888-1111222233334444-01' },
  });
  assert.equal(signin.status, 200);
  await call(`${data}/.meerkat/session`, { method: 'POST', body: { name: 'alice', password: 'wrong' }, headers: { origin: data } });

  const logs = await received((l) => l.some((x) => x.body === 'signin.refused'));
  const line = logs.find((l) => l.body === 'signin')!;
  assert.equal(line.resource['gateway.stream'], 'audit');
  assert.equal(line.attributes['user.name'], 'alice');
  assert.equal(line.attributes['client.address'], '127.0.0.1');
  assert.equal(line.attributes['gateway.organisation'], 'acme');
  assert.equal(line.attributes['gateway.target.kind'], 'account');
  assert.equal(line.traceId, '11112222333344445555666677778888', 'the trace id of the request');
  assert.equal(logs.find((l) => l.body === 'signin.refused')!.attributes['gateway.audit.detail'], 'bad-credentials');
  assert.ok(logs.every((l) => l.attributes['gateway.audit.part'] !== 'changes'), 'the console stream is off');

  // The console's lines too, once switched on; those written before are not sent after the fact.
  assert.equal((await root.put('/api/settings/audit', { push: { console: true } })).json.push.console, true);
  await putOk(root, '/api/routes/pushed', { upstream: 'http://127.0.0.1:9', paths: ['/pushed'] });
  const more = await received((l) => l.some((x) => x.attributes['gateway.target.id'] === 'pushed'));
  const change = more.find((l) => l.attributes['gateway.target.id'] === 'pushed')!;
  assert.equal(change.body, 'route.create');
  assert.equal(change.attributes['user.name'], 'root');
  assert.equal(change.attributes['gateway.token'], 'auditor');
  assert.equal(change.resource['gateway.stream'], 'audit');
  assert.ok(!more.some((l) => l.attributes['gateway.target.id'] === 'before-push'));
  assert.deepEqual(otlp.problems, []);
  assert.deepEqual((await root.get('/api/settings/audit')).json.dropped, { audit: 0, console: 0 });
});

test('the push switch needs a collector; the settings line records the switch', async () => {
  await settle();
  const lines = (await root.get('/api/audit?kind=settings.update&target=audit')).json.events;
  assert.ok(lines.some((e: any) => e.changes.some((c: any) => c.field === 'push' && c.to.console === true)));
});

test('the export: CSV of the filtered view within the caller\'s perimeter, one row per line, and its own audit.export line', async () => {
  assert.equal((await account('apps', { capabilities: ['app-admin'] })).status, 201);
  await call(`${control}/api/session`, { method: 'POST', body: { name: '=HYPERLINK("http://evil")', password: 'x' }, headers: { origin: control } });
  await settle();
  const listed = (await root.get('/api/audit?part=changes,security&limit=500')).json.events;

  const a = await root.get('/api/audit/export?part=changes,security');
  assert.equal(a.status, 200, a.text);
  assert.match(String(a.headers['content-type']), /^text\/csv/);
  assert.match(String(a.headers['content-disposition']), /attachment/);
  const rows = a.text.trimEnd().split('\r\n');
  assert.equal(rows[0], 'when,part,action,actor,token,target_kind,target_id,target_name,organisation,address,detail,changes,trace_id,attributes');
  assert.equal(rows.length - 1, listed.length, 'one row per line of the same view');
  assert.equal(a.headers['content-length'], undefined, 'written as it is read, without a length');
  assert.ok(rows.some((r) => r.includes(`"'=HYPERLINK(""http://evil"")"`)), 'a typed formula is written as text');
  const routeRow = rows.find((r) => r.includes(',route.create,') && r.includes(',pushed,'))!;
  assert.match(routeRow, /^\d{4}-\d{2}-\d{2}T[\d:.]+Z,changes,route\.create,root,auditor,route,pushed,pushed,/);
  assert.match(routeRow, /"\[\{""field"":""upstream""/, 'the diff as JSON in its own column');

  const apps = await signInAdmin(control, 'apps', 'apps-password-1');
  const theirs = await apps.get('/api/audit/export');
  assert.equal(theirs.status, 200);
  assert.ok(!theirs.text.includes(',route.create,'), 'route changes are outside app-admin\'s perimeter');
  assert.ok(!theirs.text.includes(',console,'), 'console sign-ins are root\'s');
  assert.equal((await apps.get('/api/audit/export?limit=5')).status, 400);

  // A selection larger than one piece of the stream (64 KiB) comes whole, one row per line, in the trail's order.
  for (let i = 0; i < 300; i++) assert.equal((await root.put(`/api/roles/bulk-role-${String(i).padStart(3, '0')}-${'r'.repeat(80)}`, {})).status, 201);
  await settle();
  const roleLines = (await root.get('/api/audit?targetKind=role&limit=500')).json.events.length;
  const bulk = await root.get('/api/audit/export?targetKind=role');
  assert.equal(bulk.status, 200);
  const bulkRows = bulk.text.trimEnd().split('\r\n').slice(1);
  assert.ok(bulk.text.length > 64 * 1024, String(bulk.text.length));
  assert.equal(bulkRows.length, roleLines);
  assert.deepEqual(bulkRows.map((r) => /bulk-role-(\d{3})/.exec(r)?.[1]).filter((n) => n !== undefined), Array.from({ length: 300 }, (_, i) => String(299 - i).padStart(3, '0')), 'every row once, newest first');

  await settle();
  const exports = (await root.get('/api/audit?kind=audit.export')).json.events;
  assert.equal(exports.length, 3);
  assert.deepEqual(exports.map((e: any) => e.actor.account), ['root', 'apps', 'root']);
  assert.equal(exports[0].detail, `${roleLines} rows; filters targetKind=role`);
  assert.equal(exports[2].target.kind, 'audit');
  assert.match(exports[2].detail, /rows; filters part=changes%2Csecurity/);
  assert.ok(!(await apps.get('/api/audit?limit=500')).json.events.some((e: any) => e.action === 'audit.export'), 'exports are read by root');
});

test('a route\'s endpoint audit rules are a change of the route: route.audit with the rules before and after', async () => {
  const openapi = { openapi: '3.1.0', info: { title: 'orders', version: '1' }, paths: { '/orders/{id}': { get: { summary: 'Read an order' } } } };
  await putOk(root, '/api/routes/ruled', { upstream: 'http://127.0.0.1:9', paths: ['/ruled'], openapi });
  const rules = { operations: { 'GET /orders/{id}': { on: true, fields: { order: 'path:id' } } } };
  assert.equal((await root.put('/api/routes/ruled/audit', rules)).status, 200);
  assert.equal((await root.put('/api/routes/ruled/audit', rules)).status, 200, 'the same rules again');
  assert.equal((await root.del('/api/routes/ruled/audit')).status, 204);
  await settle();
  const lines = (await root.get('/api/audit?kind=route.audit&target=ruled')).json.events;
  assert.deepEqual(lines.map((e: any) => e.changes.map((c: any) => [c.field, c.from, c.to])), [
    [['audit', rules, null]],
    [['audit', null, rules]],
  ], 'the repeated PUT moved nothing and wrote nothing');
  assert.ok(lines.every((e: any) => e.actor.token === 'auditor' && e.target.kind === 'route'));

  // The names endpoint audit masks are masked in the diff (rule 6: the field's name holds "secret"),
  // so the detail says in words which names were added or taken out.
  const masking = (secretFields: string[]) => ({ operations: { 'GET /orders/{id}': { on: true, body: true, secretFields } } });
  assert.equal((await root.put('/api/routes/ruled/audit', masking(['iban', 'cardNo']))).status, 200);
  assert.equal((await root.put('/api/routes/ruled/audit', masking(['cardNo', 'cvv']))).status, 200);
  assert.equal((await root.put('/api/routes/ruled/audit', masking(['cardNo', 'cvv']))).status, 200, 'the same again');
  await settle();
  const masked = (await root.get('/api/audit?kind=route.audit&target=ruled')).json.events;
  assert.deepEqual(masked.slice(0, 2).map((e: any) => e.detail), [
    'secretFields: GET /orders/{id} masks cvv and no longer masks iban',
    'secretFields: GET /orders/{id} masks iban, cardNo',
  ]);
  assert.equal(masked.length, 4, 'the repeated PUT wrote nothing');
  assert.match(JSON.stringify(masked[0].changes), /\*\*\*/);
});
