import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { TEST_DATABASE } from '../helpers/db.ts';

let t: TestGateway;
before(async () => { t = await startTestGateway(); });
after(async () => { await t?.close(); });

const PLANES = ['data', 'control', 'internal'] as const;

test(`healthz and readyz answer on every plane (${TEST_DATABASE})`, async () => {
  for (const plane of PLANES) {
    const h = await call(`${t.url(plane)}/healthz`);
    assert.equal(h.status, 200, plane);
    assert.deepEqual(h.json, { status: 'ok' });
    const r = await call(`${t.url(plane)}/readyz`);
    assert.equal(r.status, 200, `${plane}: ${r.text}`);
    assert.equal(r.json.status, 'ready');
    assert.equal(r.json.database, 'ok');
    assert.equal(r.json.actors.config, 'ready');
    // One ScheduleActor per shard: two by default on PostgreSQL, always one on SQLite.
    const shards = Object.keys(r.json.actors).filter((a) => a.startsWith('schedules-')).sort();
    assert.deepEqual(shards, t.db.databaseUrl ? ['schedules-0', 'schedules-1'] : ['schedules-0']);
    for (const a of shards) assert.equal(r.json.actors[a], 'ready');
  }
});

test('one listening line per open door, with plane, protocol and address', () => {
  const lines = t.logs.filter((r) => r.msg === 'listening');
  assert.equal(lines.length, 3);
  for (const plane of PLANES) {
    const line = lines.find((l) => l.attrs.plane === plane);
    assert.ok(line, plane);
    assert.equal(line.attrs.protocol, 'http');
    assert.match(String(line.attrs.address), /^127\.0\.0\.1:\d+$/);
    assert.notEqual(line.attrs.address, '127.0.0.1:0');
  }
});

test('unknown addresses get problem+json 404s with a stable code', async () => {
  const data = await call(`${t.url('data')}/orders/42`);
  assert.equal(data.status, 404);
  assert.match(String(data.headers['content-type']), /^application\/problem\+json/);
  assert.equal(data.json.code, 'route.unknown');
  assert.match(data.json.detail, /GET \/orders\/42/);
  const control = await call(`${t.url('control')}/nothing/here`);
  assert.equal(control.status, 404);
  assert.equal(control.json.code, 'not-found');
  assert.equal(control.json.type, 'urn:meerkat:problem:not-found');
});

test('a wrong method is 405 with Allow', async () => {
  const a = await call(`${t.url('control')}/healthz`, { method: 'POST' });
  assert.equal(a.status, 405);
  assert.equal(a.json.code, 'method-not-allowed');
  assert.match(String(a.headers.allow), /GET/);
});

test('HEAD on a probe answers without a body', async () => {
  const a = await call(`${t.url('data')}/healthz`, { method: 'HEAD' });
  assert.equal(a.status, 200);
  assert.equal(a.text, '');
});

test('a malformed percent-escape is a 400, not a crash', async () => {
  const a = await call(`${t.url('control')}/api/%E0%A4%A`);
  assert.equal(a.status, 400);
  assert.equal(a.json.code, 'path.invalid');
});

test('the control plane serves its OpenAPI 3.1 document, describing what exists', async () => {
  const a = await call(`${t.url('control')}/api/openapi.json`);
  assert.equal(a.status, 200);
  assert.equal(a.json.openapi, '3.1.0');
  for (const [path, method] of [['/healthz', 'get'], ['/readyz', 'get'], ['/api/session', 'post'], ['/api/session', 'get'], ['/api/session', 'delete'], ['/api/openapi.json', 'get']]) {
    assert.ok(a.json.paths[path!]?.[method!], `${method} ${path} documented`);
  }
  assert.ok(a.json.components.schemas.Problem);
  // The lists say which query parameters they read.
  const names = (path: string) => (a.json.paths[path].get.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
  for (const name of ['part', 'kind', 'actor', 'organisation', 'from', 'to', 'q', 'limit', 'cursor']) assert.ok(names('/api/audit').includes(name), `GET /api/audit documents ${name}`);
  assert.deepEqual(names('/api/logs'), ['level', 'q', 'limit']);
  assert.ok(names('/api/schedules/{id}/runs').includes('cursor'));
  assert.equal(a.json.paths['/__clock'], undefined, 'the test clock is absent without GATEWAY_CLOCK=manual');
});

test('the internal plane serves its own OpenAPI document', async () => {
  const a = await call(`${t.url('internal')}/api/openapi.json`);
  assert.equal(a.status, 200);
  assert.equal(a.json.info.title, 'Meerkat internal plane');
  assert.ok(a.json.paths['/readyz']);
});

test('the data plane documents the gateway\'s own addresses at /.meerkat/openapi.json, leaving /api/openapi.json to the routes', async () => {
  const a = await call(`${t.url('data')}/.meerkat/openapi.json`);
  assert.equal(a.status, 200, a.text);
  assert.equal(a.json.openapi, '3.1.0');
  for (const path of ['/healthz', '/readyz', '/.meerkat/session', '/.well-known/jwks.json', '/.meerkat/openapi.json']) assert.ok(a.json.paths[path], path);
  assert.equal(a.json.components.securitySchemes.session.name, 'mk_app');
  assert.equal((await call(`${t.url('data')}/api/openapi.json`)).json.code, 'route.unknown', 'an application\'s address');
});

test('the documents say what a generated client meets: refusals, headers, nullable fields, media types', async () => {
  const control = (await call(`${t.url('control')}/api/openapi.json`)).json;
  const internal = (await call(`${t.url('internal')}/api/openapi.json`)).json;
  // Every operation that reads a credential declares 401 and 403; one with a path parameter 404.
  for (const doc of [control, internal]) {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (op.security.length > 0) for (const s of ['401', '403']) assert.ok(op.responses[s], `${method} ${path} declares ${s}`);
        if (path.includes('{')) assert.ok(op.responses['404'] || op.responses['405'], `${method} ${path} declares 404`);
        if (op.responses['201']) assert.ok(op.responses['201'].headers?.Location, `${method} ${path}: 201 carries Location`);
        for (const p of op.parameters ?? []) assert.doesNotMatch(p.name, /[<>]/, `${method} ${path}: ${p.name} is a parameter's real name`);
      }
    }
  }
  const list = internal.paths['/api/schedules'].get;
  assert.ok(list.responses['200'].headers.Link, 'the next page is in Link');
  assert.ok(internal.paths['/api/schedules/{id}/runs'].get.responses['200'].headers.Link);
  const schedule = internal.paths['/api/schedules/{id}'].get.responses['200'].content['application/json'].schema;
  assert.deepEqual(schedule.properties.contentType.type, ['string', 'null']);
  assert.deepEqual(schedule.properties.name.type, ['string', 'null']);
  const run = internal.paths['/api/schedules/{id}/runs'].get.responses['200'].content['application/json'].schema.items;
  // Spec 2.2: the status "when there was one": absent otherwise, never null.
  assert.equal(run.properties.status.type, 'integer');
  assert.ok(!run.required.includes('status'));
  assert.equal(internal.paths['/api/schedules/{id}/run'].post.requestBody.required, false, 'run now takes no body');
  assert.deepEqual(control.paths['/api/session/password'].put.security, [{ session: [] }]);
  assert.ok(control.paths['/api/certificates/{id}/csr'].get.responses['200'].content['application/pkcs10']);
  assert.ok(control.paths['/api/audit/export'].get.responses['200'].content['text/csv']);
  assert.ok(control.paths['/api/settings/tls'].get.responses['200'].content['application/json'].schema.properties.doors);
  assert.ok(control.paths['/api/certificates'].post.requestBody.content['application/json'].schema.properties.names);
  // Parameters narrower than a string say so: a generated client sends a number, or one of a list.
  const param = (op: any, name: string) => op.parameters.find((p: any) => p.name === name).schema;
  assert.deepEqual(param(control.paths['/api/settings/tls/ports/{plane}'].put, 'plane').enum, ['console', 'app', 'internal']);
  assert.deepEqual(param(control.paths['/api/settings/tls/doors/{plane}'].put, 'plane').enum, ['console', 'app'], 'doors are for the planes with public names');
  assert.deepEqual(param(control.paths['/api/logs'].get, 'limit'), { type: 'integer', minimum: 1, maximum: 5000 });
  assert.equal(param(control.paths['/api/audit'].get, 'limit').type, 'integer');
  assert.equal(param(internal.paths['/api/schedules'].get, 'limit').maximum, 1000);
  assert.equal(param(internal.paths['/api/schedules/{id}/runs'].get, 'limit').default, 50);
  assert.equal(param(internal.paths['/api/schedules/{id}'].get, 'id').type, 'string');
});

test('without the manual clock, /__clock does not exist', async () => {
  const a = await call(`${t.url('control')}/__clock`);
  assert.equal(a.status, 404);
});
