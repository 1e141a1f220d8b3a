import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EndpointRuleView } from '../../src/core/model.ts';
import { DECLARED_MAX, declaredEndpoints, endpointIndex, endpointLabel } from '../../src/core/routes/endpoints.ts';
import { TemplateIndex, splitPath, type Templated } from '../../src/core/routes/template-index.ts';

const rule = (method: string, path: string): EndpointRuleView => ({ method, path, roles: ['reader'] });
const labels = (list: readonly Templated[]) => list.map((t) => `${t.method} ${t.template}`);

test('declaredEndpoints: each path of the OpenAPI document times each of its methods, upper-case', () => {
  const openapi = {
    openapi: '3.1.0',
    paths: {
      '/orders': { get: {}, post: {}, parameters: [], summary: 'orders', 'x-internal': true },
      '/orders/{id}': { get: {}, put: {}, delete: {}, patch: {}, head: {}, options: {}, trace: {} },
    },
  };
  assert.deepEqual(labels(declaredEndpoints(openapi, [])), [
    'GET /orders', 'POST /orders',
    'GET /orders/{id}', 'PUT /orders/{id}', 'DELETE /orders/{id}', 'OPTIONS /orders/{id}', 'HEAD /orders/{id}', 'PATCH /orders/{id}', 'TRACE /orders/{id}',
  ]);
});

test('declaredEndpoints: the endpoint rules add their templates, a duplicate counted once, * kept as any method', () => {
  const openapi = { paths: { '/orders/{id}': { get: {} } } };
  const rules = [rule('GET', '/orders/{id}'), rule('*', '/admin/{what}'), rule('DELETE', '/orders/{id}'), rule('*', '/admin/{what}')];
  assert.deepEqual(labels(declaredEndpoints(openapi, rules)), ['GET /orders/{id}', '* /admin/{what}', 'DELETE /orders/{id}']);
  assert.deepEqual(labels(declaredEndpoints(undefined, [rule('POST', '/x')])), ['POST /x']);
});

test('declaredEndpoints: keys that are not paths and items that are not objects are ignored; no document, no endpoints', () => {
  const openapi = { paths: { 'x-extension': { get: {} }, orders: { get: {} }, '/ok': { get: {} }, '/null': null, '/text': 'get', '/list': ['get'] } };
  assert.deepEqual(labels(declaredEndpoints(openapi, [])), ['GET /ok']);
  for (const doc of [undefined, null, 'openapi', 42, {}, { paths: null }, { paths: [] }, { paths: 'x' }]) {
    assert.deepEqual(declaredEndpoints(doc, []), [], JSON.stringify(doc));
  }
  // An inherited member is not an operation.
  const item = Object.create({ get: {} }) as Record<string, unknown>;
  assert.deepEqual(declaredEndpoints({ paths: { '/inherited': item } }, []), []);
});

test('declaredEndpoints keeps the first DECLARED_MAX templates of a document past it', () => {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < DECLARED_MAX + 100; i++) paths[`/p${i}`] = { get: {} };
  const out = declaredEndpoints({ paths }, [rule('GET', '/from-a-rule')]);
  assert.equal(out.length, DECLARED_MAX);
  assert.equal(out[0]!.template, '/p0');
  assert.equal(out.at(-1)!.template, `/p${DECLARED_MAX - 1}`);
  assert.equal(out.some((t) => t.template === '/from-a-rule'), false);
});

test('splitPath: the root is no segment; one trailing slash is dropped', () => {
  assert.deepEqual(splitPath('/'), []);
  assert.deepEqual(splitPath(''), []);
  assert.deepEqual(splitPath('/a/b'), ['a', 'b']);
  assert.deepEqual(splitPath('/a/b/'), ['a', 'b']);
  assert.deepEqual(splitPath('/a//'), ['a', '']);
});

test('TemplateIndex: a literal segment beats a variable, whatever the order of declaration', () => {
  const orders = [{ method: 'GET', template: '/orders/{id}' }, { method: 'GET', template: '/orders/mine' }, { method: 'GET', template: '/orders/{id}/lines' }];
  for (const list of [orders, [...orders].reverse()]) {
    const index = new TemplateIndex(list);
    assert.equal(index.size, 3);
    assert.equal(index.match('GET', '/orders/mine')?.value.template, '/orders/mine');
    assert.deepEqual(index.match('GET', '/orders/mine')?.variables, {});
    assert.equal(index.match('GET', '/orders/42')?.value.template, '/orders/{id}');
    assert.deepEqual(index.match('GET', '/orders/42')?.variables, { id: '42' });
    assert.equal(index.match('GET', '/orders/mine/lines')?.value.template, '/orders/{id}/lines');
    assert.equal(index.match('GET', '/orders'), undefined);
    assert.equal(index.match('GET', '/orders/42/lines/7'), undefined);
    assert.equal(index.match('POST', '/orders/42'), undefined);
  }
});

test('TemplateIndex: a mixed segment is more specific than a whole variable, less than a literal', () => {
  const index = new TemplateIndex([
    { method: 'GET', template: '/files/{name}' },
    { method: 'GET', template: '/files/{id}.json' },
    { method: 'GET', template: '/files/index.json' },
    { method: 'GET', template: '/r/{a}-{b}.{ext}' },
  ]);
  assert.equal(index.match('GET', '/files/index.json')?.value.template, '/files/index.json');
  assert.deepEqual(index.match('GET', '/files/42.json'), { value: { method: 'GET', template: '/files/{id}.json' }, variables: { id: '42' } });
  assert.deepEqual(index.match('GET', '/files/42.xml')?.variables, { name: '42.xml' });
  // The variable of a mixed segment is not empty, and the literal part is literal (`.` is no wildcard).
  assert.equal(index.match('GET', '/files/.json')?.value.template, '/files/{name}');
  assert.equal(index.match('GET', '/files/42xjson')?.value.template, '/files/{name}');
  assert.deepEqual(index.match('GET', '/r/x-y.tar')?.variables, { a: 'x', b: 'y', ext: 'tar' });
});

test('TemplateIndex: segments are percent-decoded before they compare; an encoded slash stays in its segment', () => {
  const index = new TemplateIndex([
    { method: 'GET', template: '/files/a b' },
    { method: 'GET', template: '/caf\u00e9/{x}' },
    { method: 'GET', template: '/docs/{name}' },
  ]);
  assert.equal(index.match('GET', '/files/a%20b')?.value.template, '/files/a b');
  assert.deepEqual(index.match('GET', '/caf%C3%A9/x%2Fy')?.variables, { x: 'x/y' });
  assert.deepEqual(index.match('GET', '/docs/%E2%9C%93')?.variables, { name: '\u2713' });
  // A malformed escape is kept as it came.
  assert.deepEqual(index.match('GET', '/docs/100%zz')?.variables, { name: '100%zz' });
});

test('TemplateIndex: one trailing slash is ignored; an empty segment matches no variable', () => {
  const index = new TemplateIndex([{ method: 'GET', template: '/orders/{id}' }, { method: 'GET', template: '/' }, { method: 'GET', template: '/list' }]);
  assert.equal(index.match('GET', '/orders/1/')?.value.template, '/orders/{id}');
  assert.equal(index.match('GET', '/list/')?.value.template, '/list');
  assert.equal(index.match('GET', '/')?.value.template, '/');
  assert.equal(index.match('GET', '/orders/'), undefined);
  assert.equal(index.match('GET', '/orders//'), undefined);
});

test('TemplateIndex: a variable named __proto__ is a variable like any other', () => {
  const index = new TemplateIndex([{ method: 'GET', template: '/a/{__proto__}' }, { method: 'GET', template: '/b/{__proto__}.json' }]);
  for (const path of ['/a/polluted', '/b/polluted.json']) {
    const m = index.match('GET', path);
    assert.ok(m, path);
    assert.ok(Object.hasOwn(m.variables, '__proto__'), path);
    assert.equal(Object.getOwnPropertyDescriptor(m.variables, '__proto__')?.value, 'polluted');
    assert.deepEqual(Object.keys(m.variables), ['__proto__']);
    assert.equal(Object.getPrototypeOf(m.variables), Object.prototype);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('TemplateIndex: * templates answer any method, after the method\'s own', () => {
  const index = new TemplateIndex([{ method: '*', template: '/admin/{what}' }, { method: 'DELETE', template: '/admin/{what}' }]);
  assert.equal(index.match('GET', '/admin/x')?.value.method, '*');
  assert.equal(index.match('PATCH', '/admin/x')?.value.method, '*');
  assert.equal(index.match('DELETE', '/admin/x')?.value.method, 'DELETE');
  assert.equal(new TemplateIndex([{ method: 'GET', template: '/x' }]).match('POST', '/x'), undefined);
});

test('endpointLabel: METHOD /template of the call, or null', () => {
  const rules = [rule('*', '/health')];
  const index = endpointIndex(declaredEndpoints({ paths: { '/orders/{id}': { get: {}, put: {} }, '/orders': { post: {} } } }, rules));
  assert.ok(index);
  assert.equal(endpointLabel('GET', index, '/orders/42'), 'GET /orders/{id}');
  assert.equal(endpointLabel('PUT', index, '/orders/a%20b'), 'PUT /orders/{id}');
  assert.equal(endpointLabel('POST', index, '/orders'), 'POST /orders');
  assert.equal(endpointLabel('HEAD', index, '/health'), 'HEAD /health', 'a * template is labelled with the call\'s method');
  assert.equal(endpointLabel('DELETE', index, '/orders/42'), null);
  assert.equal(endpointLabel('GET', index, '/unknown'), null);
  assert.equal(endpointLabel('GET', undefined, '/orders/42'), null);
  assert.equal(endpointIndex([]), undefined, 'a route that declares nothing has no index');
});

test('a HEAD is labelled with the template of the GET it stands for', () => {
  const index = endpointIndex([{ method: 'GET', template: '/orders/{id}' }]);
  assert.equal(endpointLabel('HEAD', index, '/orders/7'), 'HEAD /orders/{id}');
  assert.equal(endpointLabel('POST', index, '/orders/7'), null);
});
