import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import type { Answer } from '../helpers/http.ts';

let t: TestGateway;
let root: Admin;
before(async () => {
  t = await startTestGateway();
  root = await signInAdmin(t.url('control'));
});
after(async () => { await t?.close(); });

function refused(a: Answer, status: number, code: string, field?: string, detail?: RegExp): void {
  assert.equal(a.status, status, a.text);
  assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
  assert.equal(a.json.code, code, a.text);
  if (field !== undefined) assert.equal(a.json.field, field, a.text);
  if (detail) assert.match(a.json.detail, detail);
}

const ROUTE = { upstream: 'http://orders.internal:8080', paths: ['/orders'] };

test('a route is created (201, Location), read, listed, replaced (200) and deleted (204)', async () => {
  const created = await root.put('/api/routes/orders', { ...ROUTE, hosts: ['shop.example.com'], timeout: 'PT5S', stripPrefix: true });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.headers.location, '/api/routes/orders');
  assert.deepEqual({ ...created.json, createdAt: 0, updatedAt: 0 }, {
    id: 'orders', upstream: 'http://orders.internal:8080', paths: ['/orders'], hosts: ['shop.example.com'], stripPrefix: true,
    rule: null, endpointRules: [], identity: 'headers', timeout: 'PT5S', openapi: null, organisation: null, createdAt: 0, updatedAt: 0,
  });
  assert.equal((await root.get('/api/routes/orders')).json.timeout, 'PT5S');
  // PUT replaces every field: omitted ones take their defaults.
  const replaced = await root.put('/api/routes/orders', { ...ROUTE, upstream: 'https://orders.internal/v2/' });
  assert.equal(replaced.status, 200);
  assert.equal(replaced.json.upstream, 'https://orders.internal/v2');
  assert.deepEqual(replaced.json.hosts, []);
  assert.equal(replaced.json.timeout, 'PT30S');
  assert.deepEqual((await root.get('/api/routes')).json.routes.map((r: { id: string }) => r.id), ['orders']);
  assert.equal((await root.del('/api/routes/orders')).status, 204);
  refused(await root.get('/api/routes/orders'), 404, 'not-found');
  refused(await root.del('/api/routes/orders'), 404, 'not-found');
});

test('every bad route field is refused with its own code and sentence, and nothing is written', async () => {
  const cases: Array<[unknown, number, string, string, RegExp]> = [
    [{ ...ROUTE, upstream: 'ftp://files.internal' }, 400, 'route.upstream-invalid', 'upstream', /http:\/\/ or https:\/\//],
    [{ ...ROUTE, upstream: 'orders:8080/x y' }, 400, 'route.upstream-invalid', 'upstream', /not a URL|http/],
    [{ paths: ['/orders'] }, 400, 'route.upstream-invalid', 'upstream', /required/],
    [{ ...ROUTE, upstream: 'http://u:p@orders' }, 400, 'route.upstream-invalid', 'upstream', /password/],
    [{ ...ROUTE, paths: ['orders'] }, 400, 'route.path-invalid', 'paths[0]', /must start with "\/"/],
    [{ ...ROUTE, paths: [] }, 400, 'route.path-invalid', 'paths', /prefixes/],
    // A prefix no canonical request path could match would leave its rule dead.
    [{ ...ROUTE, paths: ['/svc/../admin'] }, 400, 'route.path-invalid', 'paths[0]', /segment/],
    [{ ...ROUTE, paths: ['/ok', '/v1//x'] }, 400, 'route.path-invalid', 'paths[1]', /write "\/v1\/x"/],
    [{ ...ROUTE, paths: ['/%61dmin'] }, 400, 'route.path-invalid', 'paths[0]', /write "\/admin"/],
    [{ ...ROUTE, paths: ['/c\u0001'] }, 400, 'route.path-invalid', 'paths[0]', /control characters/],
    [{ ...ROUTE, paths: ['/a\\b'] }, 400, 'route.path-invalid', 'paths[0]', /backslash/],
    [{ ...ROUTE, endpointRules: [{ method: 'GET', path: '/p/../admin/{id}', roles: ['a'] }] }, 400, 'field.invalid', 'endpointRules[0].path', /"\.\." segment/],
    [{ ...ROUTE, identity: 'saml' }, 400, 'route.identity-unknown', 'identity', /headers, remote-user, jwt/],
    [{ ...ROUTE, rule: { roles: ['ghost'] } }, 400, 'role.unknown', 'rule.roles', /"ghost"/],
    [{ ...ROUTE, rule: 'staff' }, 400, 'field.invalid', 'rule', /JSON object/],
    [{ ...ROUTE, rule: { role: ['a'] } }, 400, 'field.invalid', 'rule.role', /not a field of rule/],
    [{ ...ROUTE, endpointRules: [{ method: 'GET', path: '/x', roles: ['a'], role: 'b' }] }, 400, 'field.invalid', 'endpointRules[0].role', /not a field/],
    [{ ...ROUTE, endpointRules: [{ method: 'GET', path: '/orders/{id}', roles: ['ghost'] }] }, 400, 'role.unknown', 'endpointRules[0].roles', /"ghost"/],
    [{ ...ROUTE, endpointRules: [{ method: 'FETCH', path: '/x', roles: ['a'] }] }, 400, 'field.invalid', 'endpointRules[0].method', /method/],
    [{ ...ROUTE, endpointRules: [{ method: 'GET', path: 'orders/{id', roles: ['a'] }] }, 400, 'field.invalid', 'endpointRules[0].path', /./],
    [{ ...ROUTE, organisation: 'nowhere' }, 400, 'organisation.unknown', 'organisation', /"nowhere"/],
    [{ ...ROUTE, timeout: 'thirty seconds' }, 400, 'field.invalid', 'timeout', /duration/],
    [{ ...ROUTE, timeout: 'PT2H' }, 400, 'field.invalid', 'timeout', /PT1H/],
    [{ ...ROUTE, upstrem: 'http://x' }, 400, 'field.invalid', 'upstrem', /not a field/],
    [{ ...ROUTE, hosts: ['Shop.Example.com:443'] }, 400, 'field.invalid', 'hosts[0]', /host name/],
    [{ ...ROUTE, stripPrefix: 'yes' }, 400, 'field.invalid', 'stripPrefix', /true or false/],
    [[ROUTE], 400, 'field.invalid', 'body', /JSON object/],
  ];
  for (const [body, status, code, field, detail] of cases) {
    refused(await root.put('/api/routes/bad', body), status, code, field, detail);
  }
  refused(await root.put('/api/routes/bad%20id', ROUTE), 400, 'field.invalid', 'id');
  refused(await root.get('/api/routes/bad'), 404, 'not-found');
  assert.deepEqual((await root.get('/api/routes')).json.routes, []);
});

test('a refused replacement leaves the stored route as it was', async () => {
  assert.equal((await root.put('/api/routes/keep', ROUTE)).status, 201);
  refused(await root.put('/api/routes/keep', { ...ROUTE, rule: { roles: ['ghost'] } }), 400, 'role.unknown');
  const kept = await root.get('/api/routes/keep');
  assert.equal(kept.json.rule, null);
  assert.equal(t.gw.config.view.routesById.get('keep')?.rule, null);
  await root.del('/api/routes/keep');
});

test('the roles catalogue: implies, the hierarchy, cycles refused, roles in use kept', async () => {
  assert.equal((await root.put('/api/roles/reader', {})).status, 201);
  assert.equal((await root.put('/api/roles/writer', { implies: ['reader'] })).status, 201);
  const admin = await root.put('/api/roles/admin', { implies: ['writer'] });
  assert.equal(admin.status, 201);
  assert.deepEqual(admin.json.grants, ['admin', 'reader', 'writer']);
  refused(await root.put('/api/roles/auditor', { implies: ['ghost'] }), 400, 'role.unknown', 'implies', /"ghost"/);
  refused(await root.put('/api/roles/reader', { implies: ['admin'] }), 400, 'role.cycle', 'implies', /(?=.*reader)(?=.*admin).*→.*→/);
  refused(await root.put('/api/roles/reader', { implies: ['reader'] }), 400, 'role.cycle', 'implies');
  // The refused cycle wrote nothing.
  assert.deepEqual((await root.get('/api/roles/reader')).json.implies, []);
  refused(await root.put('/api/roles/a%20b', {}), 400, 'field.invalid', 'id');
  refused(await root.put('/api/roles/x', { implies: 'reader' }), 400, 'field.invalid', 'implies');

  assert.equal((await root.put('/api/routes/docs', { ...ROUTE, paths: ['/docs'], rule: { roles: ['reader'] } })).status, 201);
  refused(await root.del('/api/roles/reader'), 409, 'role.in-use', undefined, /route docs.*role writer|role writer.*route docs/);
  await root.del('/api/routes/docs');
  assert.equal((await root.del('/api/roles/admin')).status, 204);
  refused(await root.get('/api/roles/admin'), 404, 'not-found');
  const names = (await root.get('/api/roles')).json.roles.map((r: { name: string }) => r.name);
  assert.deepEqual(names, ['reader', 'writer']);
});

test('the control plane\'s OpenAPI document describes the resources', async () => {
  const doc = (await root.get('/api/openapi.json')).json;
  for (const p of ['/api/routes', '/api/routes/{id}', '/api/roles/{name}', '/api/accounts', '/api/accounts/{id}', '/api/tokens', '/api/tokens/{id}', '/api/organisations/{id}', '/api/vault/{name}', '/api/organisations/{id}/vault/{name}']) {
    assert.ok(doc.paths[p], `${p} is documented`);
  }
  assert.ok(doc.paths['/api/routes/{id}'].put.requestBody);
  assert.ok(doc.components.schemas.Problem.properties.code.enum.includes('route.upstream-invalid'));
});
