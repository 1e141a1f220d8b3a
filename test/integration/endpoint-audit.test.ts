/**
 * Endpoint audit through real sockets (spec 1.3 rules 12 and 13): a licensed gateway records the
 * calls of audited operations (refusals by the gateway's rules included) into the recorder given
 * at start, with the answer untouched; then the same database under the community edition keeps
 * the rules without applying them, refuses new ones and lets them be removed.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { adminWith, personWithToken, putOk, signInAdmin, type Admin } from '../helpers/admin.ts';
import type { AuditEntry } from '../../src/actors/audit/messages.ts';
import { operationEntry } from '../../src/core/audit/operations.ts';

const CONTRACT = {
  openapi: '3.1.0',
  info: { title: 'orders', version: '1' },
  paths: {
    '/orders': { get: { summary: 'List orders' }, post: { summary: 'Place an order' } },
    '/orders/{id}': { get: { summary: 'One order' }, put: { summary: 'Replace an order' } },
  },
};
const RULES = {
  operations: {
    'POST /orders': {
      on: true, body: true, secretFields: ['iban'],
      fields: { customer: 'body:/customer/id', request: 'header:x-request-id', page: 'query:page' },
    },
    'GET /orders/{id}': { on: true, description: 'Order read', fields: { order: 'path:id' } },
    'PUT /orders/{id}': { on: true, body: true },
    'GET /orders': { on: false },
  },
};

let db: TestDatabase;
let t: TestGateway;
let up: Upstream;
let root: Admin;
let d: string;
const entries: AuditEntry[] = [];
/**
 * Sees the operation lines of the data plane's calls: each call as it crosses to the AuditBatcher
 * (cloned, as the thread hand-over does), made into its line by the same function the actor runs;
 * the trail still records it. A line of the operations part recorded whole is seen too.
 */
function tap(gw: TestGateway, sink: AuditEntry[]): void {
  const client = gw.gw.ctx.audit;
  const real = client.record.bind(client);
  client.record = (e) => {
    if (e.part === 'operations') sink.push(e);
    return real(e);
  };
  const realCall = client.recordCall.bind(client);
  client.recordCall = (c) => {
    sink.push(operationEntry(structuredClone(c)));
    return realCall(c);
  };
}
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

function routeBody(openapi: unknown, extra: Record<string, unknown> = {}) {
  return {
    upstream: up.origin, paths: ['/api'], stripPrefix: true, rule: { roles: ['reader', 'buyer'] },
    endpointRules: [{ method: 'POST', path: '/orders', roles: ['buyer'] }], openapi, ...extra,
  };
}

/** Waits for the recorder to hold `count` lines: it is told once the answer ended. */
async function lines(count: number): Promise<AuditEntry[]> {
  const deadline = Date.now() + 5000;
  while (entries.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(entries.length, count, `expected ${count} audit lines, got ${entries.length}: ${entries.map((e) => e.targetName).join(', ')}`);
  return entries;
}

function as(who: string | undefined, path: string, opts: { method?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (who !== undefined) headers.authorization = `Bearer ${tokens[who]}`;
  return call(`${d}${path}`, { method: opts.method ?? 'GET', headers, ...(opts.body !== undefined ? { body: opts.body } : {}), ...(opts.raw !== undefined ? { raw: opts.raw } : {}) });
}

before(async () => {
  db = await createTestDatabase();
  up = await startUpstream();
  t = await startTestGateway({ GATEWAY_EDITION: 'licensed' }, db);
  tap(t, entries);
  d = t.url('data');
  root = await signInAdmin(t.url('control'));
  await putOk(root, '/api/roles/reader', {});
  await putOk(root, '/api/roles/buyer', {});
  await putOk(root, '/api/organisations/acme', { name: 'Acme Ltd' });
  for (const [name, roles] of [['alice', ['buyer']], ['bob', ['reader']]] as const) {
    const made = await personWithToken(root, name, [...roles], 'acme');
    tokens[name] = made.token;
    ids[name] = made.id;
  }
  await putOk(root, '/api/routes/orders', routeBody(CONTRACT));
  await putOk(root, '/api/routes/plain', { upstream: up.origin, paths: ['/plain'] });
  await putOk(root, '/api/routes/other', { upstream: up.origin, paths: ['/other'], openapi: CONTRACT });
  up.handle((req, res, received) => {
    if (req.method === 'POST' && req.url?.startsWith('/orders')) {
      const body = JSON.stringify({ placed: true, id: 'o-1', sha: received.bodySha256 });
      res.writeHead(201, { 'content-type': 'application/json', 'x-order': 'o-1', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (req.url === '/orders/slow') return; // never answers: the caller leaves first
    echo(req, res, received);
  });
});

after(async () => {
  await t?.gw.stop();
  await up?.close();
  await db?.drop();
});

test('audit rules: refused without a contract or for an operation the contract lacks; written and read back as a file', async () => {
  const plain = await root.put('/api/routes/plain/audit', { operations: { 'GET /x': { on: true } } });
  assert.equal(plain.status, 409, plain.text);
  assert.equal(plain.json.code, 'audit.no-contract');
  assert.equal((await root.put('/api/routes/plain/audit', { operations: {} })).status, 200, 'removal needs no contract');
  const unknown = await root.put('/api/routes/orders/audit', { operations: { 'DELETE /orders/{id}': { on: true } } });
  assert.equal(unknown.status, 409, unknown.text);
  assert.equal(unknown.json.code, 'audit.operation-unknown');
  assert.equal(unknown.json.field, 'operations.DELETE /orders/{id}');
  const bad = await root.put('/api/routes/orders/audit', { operations: { 'GET /orders/{id}': { on: true, fields: { order: 'path:orderId' } } } });
  assert.equal(bad.status, 400, bad.text);
  assert.equal(bad.json.code, 'field.invalid');
  assert.equal(bad.json.field, 'operations.GET /orders/{id}.fields.order');
  assert.equal((await root.put('/api/routes/ghost/audit', RULES)).status, 404);
  assert.equal((await root.get('/api/routes/ghost/audit')).status, 404);

  const written = await root.put('/api/routes/orders/audit', RULES);
  assert.equal(written.status, 200, written.text);
  assert.deepEqual(written.json, RULES);
  const file = await root.get('/api/routes/orders/audit');
  assert.equal(file.status, 200);
  assert.deepEqual(file.json, RULES);
  assert.match(String(file.headers['content-disposition']), /attachment; filename="orders-audit\.json"/);
  // The exported file is what the route editor uploads: it goes back as it came.
  assert.deepEqual((await root.put('/api/routes/orders/audit', file.json)).json, RULES);
  assert.deepEqual((await root.get('/api/routes/other/audit')).json, { operations: {} });
  assert.equal(entries.length, 0, 'no call yet, no line');
});

test('who may write and read the rules: app-admin writes, infra-admin reads', async () => {
  const made = await root.post('/api/accounts', { name: 'infra', password: 'infra-password-1', capabilities: ['infra-admin'] });
  assert.equal(made.status, 201, made.text);
  const c = t.url('control');
  const infra = adminWith(c, { cookie: await signIn(c, 'infra', 'infra-password-1'), origin: c });
  assert.equal((await infra.get('/api/routes/orders/audit')).status, 200);
  const refused = await infra.put('/api/routes/orders/audit', RULES);
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'capability');
  assert.match(refused.json.detail, /app-admin/);
});

test('an audited call is recorded with every field, after an answer it did not change', async () => {
  const before = entries.length;
  const body = { customer: { id: 'c-9', password: 'hunter2', bank: { iban: 'FR76 3000', apiKey: 'k', owner: 'Al' } }, lines: [{ sku: 'S1' }] };
  const a = await as('alice', '/api/orders?page=2', {
    method: 'POST', body,
    headers: { 'x-request-id': 'r-1', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
  });
  const sent = createHash('sha256').update(JSON.stringify(body)).digest('hex');
  assert.equal(a.status, 201);
  assert.equal(a.headers['x-order'], 'o-1');
  assert.deepEqual(a.json, { placed: true, id: 'o-1', sha: sent }, 'the answer is the service\'s, and the body reached it whole');
  const [e] = (await lines(before + 1)).slice(before);
  assert.ok(e);
  assert.equal(e.part, 'operations');
  assert.equal(e.action, 'operation.call');
  assert.equal(e.actorAccount, 'alice');
  assert.equal(e.actorToken, 'alice-app');
  assert.equal(e.targetKind, 'operation');
  assert.equal(e.targetId, 'orders');
  assert.equal(e.targetName, 'POST /orders');
  assert.equal(e.organisation, 'acme');
  assert.equal(e.detail, 'Place an order');
  assert.equal(e.address, '127.0.0.1');
  assert.equal(e.traceId, '0af7651916cd43dd8448eb211c80319c');
  assert.equal(e.changes, null);
  assert.ok(Math.abs(e.at - Date.now()) < 60_000);
  const attrs = e.attributes as Record<string, unknown>;
  assert.deepEqual({ ...attrs, 'http.request.body': undefined }, {
    'user.id': ids.alice, 'user.name': 'alice', 'gateway.roles': ['buyer'], 'gateway.tenant.id': 'acme', 'gateway.tenant.name': 'Acme Ltd',
    'gateway.route': 'orders', 'http.request.method': 'POST', 'http.route': '/orders', 'url.path': '/api/orders',
    'http.response.status_code': 201, 'client.address': '127.0.0.1',
    'audit.field.customer': 'c-9', 'audit.field.request': 'r-1', 'audit.field.page': '2', 'http.request.body': undefined,
  });
  assert.deepEqual(JSON.parse(attrs['http.request.body'] as string), {
    customer: { id: 'c-9', password: '***', bank: { iban: '***', apiKey: '***', owner: 'Al' } }, lines: [{ sku: 'S1' }],
  });
  assert.doesNotMatch(JSON.stringify(e), /hunter2|FR76/, 'no secret anywhere in the line');

  // The line is kept in the trail: Data plane, Audit, Operations.
  await t.gw.ctx.audit.call('audit.settle', null);
  const kept = await root.get('/api/audit?part=operations&target=orders');
  assert.equal(kept.status, 200, kept.text);
  const line = kept.json.events.find((x: any) => x.traceId === '0af7651916cd43dd8448eb211c80319c');
  assert.ok(line, 'the audited call is in the trail');
  assert.deepEqual([line.action, line.target, line.actor, line.detail], ['operation.call', { kind: 'operation', id: 'orders', name: 'POST /orders' }, { account: 'alice', token: 'alice-app' }, 'Place an order']);
  assert.equal(line.attributes['http.response.status_code'], 201);
  assert.doesNotMatch(kept.text, /hunter2|FR76/);

  // The export carries what an operation line holds: its trace id and its attributes, as JSON.
  const csv = await root.get('/api/audit/export?part=operations&target=orders');
  assert.equal(csv.status, 200, csv.text);
  const [head, ...rows] = csv.text.trimEnd().split('\r\n');
  assert.deepEqual(head!.split(',').slice(-2), ['trace_id', 'attributes']);
  const row = rows.find((r) => r.includes(',0af7651916cd43dd8448eb211c80319c,'));
  assert.ok(row, csv.text);
  const cells = row.slice(row.indexOf(',0af7651916cd43dd8448eb211c80319c,') + 34);
  const attributes = JSON.parse(cells.slice(1, -1).replace(/""/g, '"')) as Record<string, unknown>;
  assert.deepEqual([attributes['audit.field.customer'], attributes['http.response.status_code']], ['c-9', 201]);
  assert.doesNotMatch(csv.text, /hunter2|FR76/, 'no secret in the export either');
});

test('refusals by the gateway\'s rules are calls the caller made: 401 and 403 are recorded', async () => {
  const before = entries.length;
  const upstreamBefore = up.requests.length;
  const anonymous = await as(undefined, '/api/orders', { method: 'POST', body: { customer: { id: 'x' } } });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.json.code, 'unauthenticated', 'the refusal is the gateway\'s own, unchanged');
  const bob = await as('bob', '/api/orders', { method: 'POST', body: { customer: { id: 'y' } } });
  assert.equal(bob.status, 403);
  assert.equal(bob.json.code, 'forbidden');
  assert.equal(up.requests.length, upstreamBefore, 'nothing reached the service');
  const [first, second] = (await lines(before + 2)).slice(before);
  assert.equal(first!.actorAccount, null);
  assert.equal(first!.organisation, null);
  const a1 = first!.attributes as Record<string, unknown>;
  assert.equal(a1['http.response.status_code'], 401);
  assert.equal(a1['user.name'], undefined);
  assert.equal(a1['audit.body.omitted'], 'not read: the call was refused before its body was read');
  assert.equal(a1['audit.field.customer'], undefined);
  assert.equal(second!.actorAccount, 'bob');
  assert.equal(second!.organisation, 'acme');
  assert.equal((second!.attributes as Record<string, unknown>)['http.response.status_code'], 403);
});

test('path variables are decoded; operations switched off, unaudited routes and unmatched paths record nothing', async () => {
  const before = entries.length;
  const got = await as('alice', '/api/orders/a%20b');
  assert.equal(got.status, 200);
  assert.equal(got.json.url, '/orders/a%20b', 'the service saw the path as asked');
  const [e] = (await lines(before + 1)).slice(before);
  assert.equal(e!.targetName, 'GET /orders/{id}');
  assert.equal(e!.detail, 'Order read');
  assert.equal((e!.attributes as Record<string, unknown>)['audit.field.order'], 'a b');
  assert.equal((e!.attributes as Record<string, unknown>)['url.path'], '/api/orders/a%20b');

  assert.equal((await as('alice', '/api/orders')).status, 200, 'GET /orders: rule switched off');
  assert.equal((await as('alice', '/api/orders/1/lines')).status, 200, 'no operation of the contract');
  assert.equal((await as('alice', '/other/orders', { method: 'POST', body: {} })).status, 200, 'a route without rules');
  assert.equal((await as('alice', '/plain/x')).status, 200);
  // A last audited call: the lines before it would have arrived first.
  await as('alice', '/api/orders/z');
  const after = await lines(before + 2);
  assert.equal(after.at(-1)!.targetName, 'GET /orders/{id}');

  // A service that decodes %2F reads GET /orders/7: the escaped slash does not keep the call out of the trail.
  for (const [path, order] of [['/api/orders%2F7', '7'], ['/api/orders%2F/8', '8']] as const) {
    const n = entries.length;
    assert.equal((await as('alice', path)).status, 200, path);
    const e = (await lines(n + 1)).at(-1)!;
    assert.equal(e.targetName, 'GET /orders/{id}', path);
    assert.equal((e.attributes as Record<string, unknown>)['audit.field.order'], order, path);
    assert.equal((e.attributes as Record<string, unknown>)['url.path'], path, 'the path as asked');
  }
});

test('a body over 64 KB is not kept, a chunked JSON body is, and both reach the service whole', async () => {
  const before = entries.length;
  const big = { customer: { id: 'c-big' }, pad: 'x'.repeat(100_000) };
  const text = JSON.stringify(big);
  const a = await as('alice', '/api/orders/7', { method: 'PUT', raw: text, headers: { 'content-type': 'application/json' } });
  assert.equal(a.status, 200);
  assert.equal(a.json.bodyLength, Buffer.byteLength(text));
  const [e] = (await lines(before + 1)).slice(before);
  const attrs = e!.attributes as Record<string, unknown>;
  assert.equal(attrs['http.request.body'], undefined);
  assert.equal(attrs['audit.body.omitted'], `larger than 64 KB (${Buffer.byteLength(text)} bytes)`);
  assert.doesNotMatch(JSON.stringify(e), /c-big|xxxx/);

  // A chunked body is taken by the HTTPS doors only (the plain doors answer it 411: docs/core.md).
  const cert = await root.post('/api/certificates', { source: 'self-signed', names: ['localhost'] });
  assert.equal(cert.status, 201, cert.text);
  assert.equal((await root.put(`/api/certificates/${cert.json.id}/placement`, { planes: ['app'] })).status, 200);
  const door = t.gw.doors.find((x) => x.plane === 'data' && x.protocol === 'https');
  assert.ok(door, 'the data plane has an HTTPS door');
  const chunks = [Buffer.from('{"customer":{"id":"c-7","token":"s3cr'), Buffer.from('et"},"n":1}')];
  const tls = new Agent({ connect: { rejectUnauthorized: false } });
  const res = await request(`https://localhost:${door.port}/api/orders/8`, {
    method: 'PUT', headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json' },
    body: Readable.from(chunks), dispatcher: tls,
  });
  const echoed = await res.body.json() as { bodyLength: number; headers: Record<string, string> };
  assert.equal(res.statusCode, 200);
  assert.equal(echoed.headers['transfer-encoding'], 'chunked', 'streamed on, not read whole');
  assert.equal(echoed.bodyLength, Buffer.concat(chunks).length);
  const [chunked] = (await lines(before + 2)).slice(before + 1);
  assert.deepEqual(JSON.parse((chunked!.attributes as Record<string, unknown>)['http.request.body'] as string), { customer: { id: 'c-7', token: '***' }, n: 1 });
  await tls.close();
  assert.equal((await root.put(`/api/certificates/${cert.json.id}/placement`, { planes: [] })).status, 200);
  assert.equal((await root.del(`/api/certificates/${cert.json.id}`)).status, 204);
});

test('a caller who leaves before the answer is recorded as 499', async () => {
  const before = entries.length;
  const controller = new AbortController();
  const asked = request(`${d}/api/orders/slow`, { headers: { authorization: `Bearer ${tokens.alice}` }, signal: controller.signal });
  const deadline = Date.now() + 5000;
  while (!up.requests.some((r) => r.url === '/orders/slow') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  controller.abort();
  await assert.rejects(asked);
  const [e] = (await lines(before + 1)).slice(before);
  const attrs = e!.attributes as Record<string, unknown>;
  assert.equal(attrs['http.response.status_code'], 499);
  assert.equal(attrs['gateway.outcome'], 'aborted');
});

test('a route PUT keeps the rules, and refuses a contract that drops an audited operation', async () => {
  assert.equal((await root.put('/api/routes/orders', routeBody(CONTRACT, { timeout: 'PT10S' }))).status, 200);
  assert.deepEqual((await root.get('/api/routes/orders/audit')).json, RULES);
  const before = entries.length;
  await as('alice', '/api/orders/kept');
  assert.equal((await lines(before + 1)).at(-1)!.targetName, 'GET /orders/{id}', 'still applied');

  const dropped = await root.put('/api/routes/orders', routeBody({ paths: { '/orders': { post: {} } } }));
  assert.equal(dropped.status, 409, dropped.text);
  assert.equal(dropped.json.code, 'audit.operation-unknown');
  assert.equal(dropped.json.field, 'openapi');
  assert.match(dropped.json.detail, /no longer has GET \/orders, GET \/orders\/\{id\}, PUT \/orders\/\{id\}, which its endpoint audit names/);
  const none = await root.put('/api/routes/orders', routeBody(null));
  assert.equal(none.status, 409);
  assert.equal(none.json.code, 'audit.no-contract');
  assert.deepEqual((await root.get('/api/routes/orders')).json.openapi, CONTRACT, 'the refused PUT changed nothing');
});

test('community edition on the same database: rules kept, not applied, refused, removable', async () => {
  await t.gw.stop();
  const seen: AuditEntry[] = [];
  const file = join(db.dataDir, 'gateway.json');
  writeFileSync(file, JSON.stringify({
    routes: { imported: { upstream: up.origin, paths: ['/imported'], openapi: CONTRACT, audit: { operations: { 'GET /orders': { on: true } } } } },
  }));
  t = await startTestGateway({ GATEWAY_EDITION: 'community', GATEWAY_CONFIG: file }, db);
  tap(t, seen);
  d = t.url('data');
  root = await signInAdmin(t.url('control'));
  assert.deepEqual((await root.get('/api/routes/orders/audit')).json, RULES, 'kept with the route');
  assert.deepEqual((await root.get('/api/routes/imported/audit')).json, { operations: { 'GET /orders': { on: true } } }, 'the declarative file carries rules');

  const refused = await root.put('/api/routes/orders/audit', RULES);
  assert.equal(refused.status, 403);
  assert.equal(refused.json.code, 'licensed-edition');
  assert.match(refused.json.detail, /^Endpoint audit .* belongs to the licensed edition/);

  assert.equal((await as('alice', '/api/orders', { method: 'POST', body: { customer: { id: 'c' } } })).status, 201);
  assert.equal((await as(undefined, '/api/orders/1')).status, 401);
  assert.equal((await call(`${d}/imported/orders`)).status, 200);
  assert.deepEqual(seen, [], 'kept rules are not applied');

  const removed = await root.put('/api/routes/orders/audit', { operations: {} });
  assert.equal(removed.status, 200, removed.text);
  assert.deepEqual((await root.get('/api/routes/orders/audit')).json, { operations: {} });
  assert.equal((await root.del('/api/routes/imported/audit')).status, 204);
  assert.deepEqual((await root.get('/api/routes/imported/audit')).json, { operations: {} });
  // Without rules, a contract change is the route's own business again.
  assert.equal((await root.put('/api/routes/orders', routeBody(null))).status, 200);
});
