import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from '../../src/http/errors.ts';
import {
  contractConflict, contractExcerpt, isRemoval, parseRouteAudit, sortedAudit, type RouteAudit,
} from '../../src/core/audit/rules.ts';
import { compileOperationAudit, operationEntry, type OperationCall } from '../../src/core/audit/operations.ts';
import { BODY_MAX_BYTES } from '../../src/core/audit/mask.ts';

const CONTRACT = {
  openapi: '3.1.0',
  paths: {
    '/orders': { get: { summary: 'List orders' }, post: { summary: 'Place an order' } },
    '/orders/{id}': { get: { summary: 'One order' }, put: {}, delete: { summary: '  ' } },
    '/orders/latest': { get: { summary: 'The latest order' } },
    '/files/{name}.{ext}': { get: { summary: 'A file' } },
    '/': { get: { summary: 'Home' } },
  },
};

function refusal(fn: () => unknown, code: string, field?: string): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    assert.equal(err.code, code, err.detail);
    if (field !== undefined) assert.equal(err.field, field, err.detail);
    assert.match(err.detail, /\S.*\.$/s, err.detail);
    return err;
  }
  assert.fail(`expected a ${code} refusal`);
}

test('rules are read against the contract: keys normalised, defaults left out', () => {
  const rules = parseRouteAudit({
    operations: {
      'post /orders': { on: true, body: true, secretFields: ['iban', 'iban'], fields: { customer: 'body:/customer/id' } },
      'GET /orders/{id}': { on: false, description: 'Order read', fields: {}, body: false, secretFields: [] },
    },
  }, CONTRACT);
  assert.deepEqual(rules, {
    operations: {
      'POST /orders': { on: true, body: true, secretFields: ['iban'], fields: { customer: 'body:/customer/id' } },
      'GET /orders/{id}': { on: false, description: 'Order read' },
    },
  });
  assert.deepEqual(parseRouteAudit({ operations: {} }, null), { operations: {} }, 'removal needs no contract');
  assert.ok(isRemoval({ operations: {} }));
  assert.ok(!isRemoval({ operations: { 'GET /orders': { on: false } } }));
  assert.ok(!isRemoval({ operations: {}, extra: 1 }));
  assert.ok(!isRemoval(null));
});

test('refusals name the field and say what is expected', () => {
  refusal(() => parseRouteAudit([], CONTRACT), 'field.invalid', 'body');
  refusal(() => parseRouteAudit({ operations: {}, rules: {} }, CONTRACT), 'field.invalid', 'rules');
  refusal(() => parseRouteAudit({ operations: [] }, CONTRACT), 'field.invalid', 'operations');
  refusal(() => parseRouteAudit({ operations: { 'GET /orders': { on: true } } }, null), 'audit.no-contract', 'operations');
  refusal(() => parseRouteAudit({ operations: { '/orders': { on: true } } }, CONTRACT), 'field.invalid', 'operations./orders');
  refusal(() => parseRouteAudit({ operations: { 'FETCH /orders': { on: true } } }, CONTRACT), 'field.invalid');
  const unknown = refusal(() => parseRouteAudit({ operations: { 'PATCH /orders': { on: true } } }, CONTRACT), 'audit.operation-unknown', 'operations.PATCH /orders');
  assert.match(unknown.detail, /PATCH \/orders is not an operation/);
  refusal(() => parseRouteAudit({ operations: { 'GET /orders/{orderId}': { on: true } } }, CONTRACT), 'audit.operation-unknown');
  refusal(() => parseRouteAudit({ operations: { 'GET /orders': { on: true }, 'get /orders': { on: false } } }, CONTRACT), 'field.invalid');
  const op = (rule: unknown) => () => parseRouteAudit({ operations: { 'GET /orders/{id}': rule } }, CONTRACT);
  refusal(op({}), 'field.invalid', 'operations.GET /orders/{id}.on');
  refusal(op({ on: 'yes' }), 'field.invalid', 'operations.GET /orders/{id}.on');
  refusal(op({ on: true, extra: 1 }), 'field.invalid', 'operations.GET /orders/{id}.extra');
  refusal(op({ on: true, description: 'x'.repeat(501) }), 'field.invalid', 'operations.GET /orders/{id}.description');
  refusal(op({ on: true, body: 'yes' }), 'field.invalid', 'operations.GET /orders/{id}.body');
  refusal(op({ on: true, fields: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, 'path:id'])) }), 'field.invalid', 'operations.GET /orders/{id}.fields');
  refusal(op({ on: true, fields: { 'a b': 'path:id' } }), 'field.invalid', 'operations.GET /orders/{id}.fields.a b');
  refusal(op({ on: true, fields: { ['x'.repeat(65)]: 'path:id' } }), 'field.invalid');
  const noVar = refusal(op({ on: true, fields: { order: 'path:orderId' } }), 'field.invalid', 'operations.GET /orders/{id}.fields.order');
  assert.match(noVar.detail, /\{id\}/);
  refusal(op({ on: true, fields: { order: 'cookie:id' } }), 'field.invalid');
  refusal(op({ on: true, fields: { order: 'body:customer' } }), 'field.invalid');
  refusal(op({ on: true, fields: { order: 'body:/a~2' } }), 'field.invalid');
  refusal(op({ on: true, fields: { order: 'header:bad header' } }), 'field.invalid');
  refusal(op({ on: true, fields: { order: 'query:' } }), 'field.invalid');
  refusal(op({ on: true, fields: { order: 7 } }), 'field.invalid');
  refusal(op({ on: true, secretFields: Array.from({ length: 51 }, (_, i) => `s${i}`) }), 'field.invalid', 'operations.GET /orders/{id}.secretFields');
  refusal(op({ on: true, secretFields: [''] }), 'field.invalid');
  // At the limits: accepted.
  parseRouteAudit({ operations: { 'GET /orders/{id}': {
    on: true, description: 'x'.repeat(500), secretFields: Array.from({ length: 50 }, (_, i) => `s${i}`),
    fields: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f.${i}-_${'y'.repeat(50)}`, 'header:x-request-id'])),
  } } }, CONTRACT);
});

test('a new contract that drops an audited operation, or no contract, conflicts with kept rules', () => {
  const rules: RouteAudit = { operations: { 'POST /orders': { on: true }, 'GET /orders/{id}': { on: false } } };
  assert.equal(contractConflict(CONTRACT, rules, 'orders'), undefined);
  assert.equal(contractConflict(null, null, 'orders'), undefined);
  assert.equal(contractConflict(null, { operations: {} }, 'orders'), undefined);
  const gone = contractConflict(null, rules, 'orders');
  assert.equal(gone?.code, 'audit.no-contract');
  assert.equal(gone?.field, 'openapi');
  const dropped = contractConflict({ paths: { '/orders': { post: {} } } }, rules, 'orders');
  assert.equal(dropped?.code, 'audit.operation-unknown');
  assert.match(dropped!.detail, /no longer has GET \/orders\/\{id\}, which its endpoint audit names/);
  assert.match(dropped!.detail, /PUT \/api\/routes\/orders\/audit/);
});

test('the excerpt keeps what compiling needs: the summaries of the operations named', () => {
  const rules = parseRouteAudit({ operations: { 'POST /orders': { on: true }, 'PUT /orders/{id}': { on: true } } }, CONTRACT);
  assert.deepEqual(contractExcerpt(CONTRACT, rules), { paths: { '/orders': { post: { summary: 'Place an order' } }, '/orders/{id}': { put: {} } } });
});

test('matching: method exact, literal before variable, variables decoded, trailing slash ignored', () => {
  const rules = parseRouteAudit({ operations: {
    'GET /orders/{id}': { on: true }, 'GET /orders/latest': { on: true }, 'GET /orders': { on: false },
    'GET /files/{name}.{ext}': { on: true }, 'DELETE /orders/{id}': { on: true, description: 'Order cancelled' },
    'GET /': { on: true },
  } }, CONTRACT);
  const index = compileOperationAudit(CONTRACT, rules)!;
  assert.equal(index.size, 5, 'a rule switched off is not compiled');
  assert.equal(index.match('GET', '/orders/latest')?.operation.template, '/orders/latest');
  const one = index.match('GET', '/orders/a%20b%2Fc/');
  assert.equal(one?.operation.key, 'GET /orders/{id}');
  assert.deepEqual(one?.variables, { id: 'a b/c' });
  assert.equal(one?.operation.description, 'One order', 'the contract\'s summary');
  assert.equal(index.match('DELETE', '/orders/7')?.operation.description, 'Order cancelled', 'the rule\'s description first');
  assert.equal(index.match('GET', '/orders'), undefined, 'switched off');
  assert.equal(index.match('HEAD', '/orders/7'), undefined, 'HEAD is its own operation');
  assert.equal(index.match('POST', '/orders/7'), undefined);
  assert.equal(index.match('GET', '/orders/7/lines'), undefined);
  assert.equal(index.match('GET', '/orders//'), undefined, 'an empty variable matches nothing');
  assert.deepEqual(index.match('GET', '/files/report.v2.pdf')?.variables, { name: 'report', ext: 'v2.pdf' });
  assert.equal(index.match('GET', '/')?.operation.key, 'GET /');
  assert.equal(index.match('GET', '/%zz'), undefined);
  const blank = compileOperationAudit(CONTRACT, parseRouteAudit({ operations: { 'DELETE /orders/{id}': { on: true }, 'PUT /orders/{id}': { on: true } } }, CONTRACT))!;
  assert.equal(blank.match('DELETE', '/orders/1')?.operation.description, 'DELETE /orders/{id}', 'a blank summary falls back to the key');
  assert.equal(blank.match('PUT', '/orders/1')?.operation.description, 'PUT /orders/{id}');
  assert.equal(compileOperationAudit(CONTRACT, { operations: { 'GET /orders': { on: false } } }), undefined);
  assert.equal(compileOperationAudit(CONTRACT, null), undefined);
});

test('an order of their own: exported operations by template then method, ties between templates by text', () => {
  const rules: RouteAudit = { operations: { 'PUT /orders/{id}': { on: true }, 'GET /orders/{id}': { on: true }, 'POST /orders': { on: true } } };
  assert.deepEqual(Object.keys(sortedAudit(rules).operations), ['POST /orders', 'GET /orders/{id}', 'PUT /orders/{id}']);
  const contract = { paths: { '/f/{a}.json': { get: {} }, '/f/{a}.{b}': { get: {} } } };
  for (const operations of [{ 'GET /f/{a}.json': { on: true }, 'GET /f/{a}.{b}': { on: true } }, { 'GET /f/{a}.{b}': { on: true }, 'GET /f/{a}.json': { on: true } }]) {
    const index = compileOperationAudit(contract, { operations })!;
    assert.equal(index.match('GET', '/f/x.json')?.operation.template, '/f/{a}.json', 'whatever order the store kept');
  }
});

test('matching stays correct with many templates', () => {
  const paths: Record<string, unknown> = {};
  const operations: Record<string, { on: boolean }> = {};
  for (let i = 0; i < 200; i++) {
    paths[`/r${i}/{id}`] = { get: {} };
    operations[`GET /r${i}/{id}`] = { on: true };
  }
  const index = compileOperationAudit({ paths }, parseRouteAudit({ operations }, { paths }))!;
  assert.equal(index.match('GET', '/r199/x')?.operation.template, '/r199/{id}');
  assert.equal(index.match('GET', '/r200/x'), undefined);
});

const ORDER_RULES = parseRouteAudit({ operations: {
  'POST /orders': {
    on: true, body: true, secretFields: ['iban'],
    fields: {
      customer: 'body:/customer/id', first: 'body:/lines/0/sku', card: 'body:/payment/cardNumber', all: 'body:/customer',
      key: 'header:X-Api-Key', request: 'header:x-request-id', page: 'query:page', missing: 'query:none',
    },
  },
  'GET /orders/{id}': { on: true, fields: { order: 'path:id', trace: 'header:traceparent' } },
} }, CONTRACT);
const INDEX = compileOperationAudit(CONTRACT, ORDER_RULES)!;

function call(over: Partial<OperationCall> & { body?: OperationCall['body'] }, method = 'POST', path = '/orders'): OperationCall {
  return {
    at: 1_764_000_000_000,
    routeId: 'orders',
    match: INDEX.match(method, path)!,
    method,
    path: `/api${path}`,
    query: 'page=2&page=3',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k-123', 'x-request-id': 'r-1' },
    status: 201,
    aborted: false,
    address: '203.0.113.7',
    traceId: '0af7651916cd43dd8448eb211c80319c',
    user: { id: 'acc-1', name: 'alice', token: 'alice-app', roles: ['buyer', 'reader'] },
    tenant: { id: 'acme', name: 'Acme Ltd' },
    group: null,
    body: undefined,
    ...over,
  };
}

const bytes = (value: unknown) => {
  const b = Buffer.from(JSON.stringify(value));
  return { bytes: b, size: b.length, complete: true };
};

test('an audited call gives the line with every field of spec 2.6', () => {
  const body = { customer: { id: 'c-9', password: 'p', profile: { IBAN: 'FR76', token: 't', name: 'Al' } }, lines: [{ sku: 'S1', pin: 1234 }], payment: { cardNumber: '4111', card: 'visa' } };
  const entry = operationEntry(call({ body: bytes(body) }));
  assert.deepEqual({ ...entry, attributes: undefined }, {
    at: 1_764_000_000_000, part: 'operations', action: 'operation.call', actorAccount: 'alice', actorToken: 'alice-app',
    targetKind: 'operation', targetId: 'orders', targetName: 'POST /orders', organisation: 'acme', changes: null,
    detail: 'Place an order', address: '203.0.113.7', traceId: '0af7651916cd43dd8448eb211c80319c', attributes: undefined,
  });
  const a = entry.attributes as Record<string, unknown>;
  assert.deepEqual(Object.keys(a).sort(), [
    'audit.field.all', 'audit.field.card', 'audit.field.customer', 'audit.field.first', 'audit.field.key', 'audit.field.page', 'audit.field.request',
    'client.address', 'gateway.roles', 'gateway.route', 'gateway.tenant.id', 'gateway.tenant.name', 'http.request.body', 'http.request.method',
    'http.response.status_code', 'http.route', 'url.path', 'user.id', 'user.name',
  ]);
  assert.equal(a['user.id'], 'acc-1');
  assert.equal(a['user.name'], 'alice');
  assert.deepEqual(a['gateway.roles'], ['buyer', 'reader']);
  assert.equal(a['gateway.tenant.id'], 'acme');
  assert.equal(a['gateway.tenant.name'], 'Acme Ltd');
  assert.equal(a['gateway.route'], 'orders');
  assert.equal(a['http.request.method'], 'POST');
  assert.equal(a['http.route'], '/orders');
  assert.equal(a['url.path'], '/api/orders');
  assert.equal(a['http.response.status_code'], 201);
  assert.equal(a['client.address'], '203.0.113.7');
  assert.equal(a['audit.field.customer'], 'c-9');
  assert.equal(a['audit.field.first'], 'S1');
  assert.equal(a['audit.field.card'], '***', 'a pointer ending on a secret name is masked');
  assert.deepEqual(JSON.parse(a['audit.field.all'] as string), { id: 'c-9', password: '***', profile: { IBAN: '***', token: '***', name: 'Al' } });
  assert.equal(a['audit.field.key'], '***', 'a header named for a secret is masked');
  assert.equal(a['audit.field.request'], 'r-1');
  assert.equal(a['audit.field.page'], '2', 'the first value of a repeated parameter');
  assert.deepEqual(JSON.parse(a['http.request.body'] as string), {
    customer: { id: 'c-9', password: '***', profile: { IBAN: '***', token: '***', name: 'Al' } },
    lines: [{ sku: 'S1', pin: '***' }], payment: { cardNumber: '***', card: 'visa' },
  });
});

test('path variables and headers of a GET; no caller, no tenant, no body attribute', () => {
  const entry = operationEntry(call({ user: null, tenant: null, status: 401, headers: { traceparent: 'x' } }, 'GET', '/orders/a%2Fb'));
  const a = entry.attributes as Record<string, unknown>;
  assert.equal(entry.actorAccount, null);
  assert.equal(entry.actorToken, null);
  assert.equal(entry.organisation, null);
  assert.equal(entry.targetName, 'GET /orders/{id}');
  assert.equal(a['audit.field.order'], 'a/b');
  assert.equal(a['audit.field.trace'], 'x');
  assert.equal(a['http.response.status_code'], 401);
  for (const k of ['user.id', 'user.name', 'gateway.roles', 'gateway.tenant.id', 'gateway.group', 'http.request.body', 'audit.body.omitted']) assert.ok(!(k in a), k);
});

test('a body not kept says why, and never holds any of it', () => {
  const omitted = (over: Partial<OperationCall>) => {
    const a = operationEntry(call(over)).attributes as Record<string, unknown>;
    assert.equal(a['http.request.body'], undefined);
    assert.equal(a['audit.field.customer'], undefined, 'no body field from a body not kept');
    return a['audit.body.omitted'];
  };
  const big = Buffer.from(JSON.stringify({ customer: { id: 'c-1' }, pad: 'x'.repeat(BODY_MAX_BYTES) }));
  assert.equal(omitted({ body: { bytes: null, size: big.length, complete: true } }), `larger than 64 KB (${big.length} bytes)`);
  assert.equal(omitted({ body: { bytes: big, size: big.length, complete: true } }), `larger than 64 KB (${big.length} bytes)`);
  assert.equal(omitted({ body: bytes({ customer: { id: 'c' } }), headers: { 'content-type': 'text/plain' } }), 'not JSON (text/plain)');
  assert.equal(omitted({ body: bytes({ customer: { id: 'c' } }), headers: {} }), 'not JSON (no content type)');
  assert.equal(omitted({ body: { bytes: Buffer.from('{"customer":'), size: 12, complete: true } }), 'not valid JSON');
  assert.equal(omitted({ body: { ...bytes({ customer: { id: 'c' } }), complete: false } }), 'not received whole: the answer came before the body ended');
  assert.equal(omitted({ body: undefined, status: 403 }), 'not read: the call was refused before its body was read');
  assert.equal(omitted({ body: { bytes: new Uint8Array(0), size: 0, complete: true } }), undefined, 'no body, nothing to say');
  const vendor = operationEntry(call({ body: bytes({ customer: { id: 'v' } }), headers: { 'content-type': 'application/vnd.acme+json; charset=utf-8' } }));
  assert.equal((vendor.attributes as Record<string, unknown>)['audit.field.customer'], 'v');
});

test('an aborted call says so; long values are clipped', () => {
  const entry = operationEntry(call({ aborted: true, status: 499, headers: { 'content-type': 'application/json', 'x-request-id': 'r'.repeat(5000) } }));
  const a = entry.attributes as Record<string, unknown>;
  assert.equal(a['gateway.outcome'], 'aborted');
  assert.equal(a['http.response.status_code'], 499);
  assert.equal(Array.from(a['audit.field.request'] as string).length, 1000);
});

test('a field whose pointer passes through a secret field is masked like the field itself', () => {
  const rules = parseRouteAudit({ operations: { 'POST /orders': { on: true, fields: {
    first: 'body:/passwords/0', inner: 'body:/credentials/user', deep: 'body:/payment/cardNumber/last4', plain: 'body:/lines/0/sku',
  } } } }, CONTRACT);
  const index = compileOperationAudit(CONTRACT, rules)!;
  const body = { passwords: ['PWINARRAY1', 'b'], credentials: { user: 'u-1' }, payment: { cardNumber: { last4: '1111' } }, lines: [{ sku: 'S1' }] };
  const a = operationEntry(call({ match: index.match('POST', '/orders')!, body: bytes(body) })).attributes as Record<string, unknown>;
  assert.equal(a['audit.field.first'], '***');
  assert.equal(a['audit.field.deep'], '***');
  assert.equal(a['audit.field.inner'], '***');
  assert.equal(a['audit.field.plain'], 'S1');
  assert.doesNotMatch(JSON.stringify(a), /PWINARRAY1|1111/);
});
