import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuditRow } from '../../src/store/audit.ts';
import { recordOf } from '../../src/actors/audit/push-record.ts';
import { logsUrl } from '../../src/actors/otlp-push.ts';
import { streamOf } from '../../src/actors/audit/messages.ts';

const base: AuditRow = {
  id: 'aud-0001', at: 1_764_000_000_123, part: 'changes', action: 'route.update',
  actorAccount: 'deploy-bot', actorToken: 'ci-pipeline', targetKind: 'route', targetId: 'orders', targetName: 'orders',
  organisation: 'acme', changes: [{ field: 'timeoutMs', from: 30000, to: 10000 }], detail: null, address: '203.0.113.9',
  node: 'node-1', traceId: null, attributes: null,
};
const row = (over: Partial<AuditRow>): AuditRow => ({ ...base, ...over });

test('a change: the action is the body, the columns are the attributes, the changes their JSON', () => {
  const r = recordOf(base);
  assert.equal(r.body, 'route.update');
  assert.equal(r.timestamp, 1_764_000_000_123);
  assert.equal(r.traceId, null);
  assert.deepEqual(r.attributes, {
    'user.id': 'deploy-bot', 'user.name': 'deploy-bot', 'gateway.token': 'ci-pipeline',
    'gateway.target.kind': 'route', 'gateway.target.id': 'orders', 'gateway.target.name': 'orders',
    'gateway.organisation': 'acme', 'client.address': '203.0.113.9',
    'gateway.audit.part': 'changes', 'gateway.audit.action': 'route.update', 'gateway.audit.id': 'aud-0001',
    'gateway.audit.changes': '[{"field":"timeoutMs","from":30000,"to":10000}]',
  });
});

test('absent columns give no attribute; the detail is kept; a refused name has no user', () => {
  const r = recordOf(row({
    part: 'security', action: 'signin.refused', actorAccount: null, actorToken: null, targetKind: 'account',
    targetId: null, targetName: 'mallory', organisation: null, changes: null, detail: 'bad-credentials',
  }));
  assert.equal(r.body, 'signin.refused');
  assert.deepEqual(r.attributes, {
    'gateway.target.kind': 'account', 'gateway.target.name': 'mallory', 'client.address': '203.0.113.9',
    'gateway.audit.part': 'security', 'gateway.audit.action': 'signin.refused', 'gateway.audit.id': 'aud-0001',
    'gateway.audit.detail': 'bad-credentials',
  });
});

test('an operation: the description is the body, its own fields join the attributes, lists and objects as JSON', () => {
  const r = recordOf(row({
    part: 'operations', action: 'POST /orders', targetKind: 'operation', targetName: 'POST /orders', changes: null,
    detail: 'Place an order', traceId: '0AF7651916CD43DD8448EB211C80319C',
    attributes: {
      'user.id': 'acc-42', 'http.request.method': 'POST', 'http.route': '/orders', 'url.path': '/orders',
      'http.response.status_code': 201, 'gateway.roles': ['buyer', 'viewer'], 'audit.field.order': { id: 7 },
      'audit.field.express': true, 'audit.field.ratio': 0.5, 'audit.field.empty': null,
      'gateway.audit.id': 'forged', 'gateway.audit.part': 'changes', '': 'no name',
    },
  }));
  assert.equal(r.body, 'Place an order');
  assert.equal(r.traceId, '0af7651916cd43dd8448eb211c80319c');
  const a = r.attributes;
  assert.equal(a['gateway.audit.action'], 'POST /orders');
  assert.equal(a['gateway.audit.detail'], 'Place an order');
  assert.equal(a['user.id'], 'acc-42', 'the operation names the account by its id');
  assert.equal(a['user.name'], 'deploy-bot');
  assert.equal(a['http.request.method'], 'POST');
  assert.equal(a['http.response.status_code'], 201);
  assert.equal(a['gateway.roles'], '["buyer","viewer"]');
  assert.equal(a['audit.field.order'], '{"id":7}');
  assert.equal(a['audit.field.express'], true);
  assert.equal(a['audit.field.ratio'], 0.5);
  assert.ok(!('audit.field.empty' in a));
  assert.ok(!('' in a));
  assert.equal(a['gateway.audit.id'], 'aud-0001', 'the gateway.audit namespace is the columns\' own');
  assert.equal(a['gateway.audit.part'], 'operations');
});

test('an operation without a description falls back to the action', () => {
  assert.equal(recordOf(row({ part: 'operations', action: 'GET /x', detail: null })).body, 'GET /x');
  assert.equal(recordOf(row({ part: 'operations', action: 'GET /x', detail: '' })).body, 'GET /x');
  assert.equal(recordOf(row({ part: 'security', action: 'signin.refused', detail: 'disabled' })).body, 'signin.refused');
});

test('attributes that are not an object are ignored; changes given as text are kept as they are', () => {
  for (const attributes of [null, 'text', ['a'], 7]) {
    const r = recordOf(row({ attributes }));
    assert.equal(Object.keys(r.attributes).length, 12, JSON.stringify(attributes));
  }
  assert.equal(recordOf(row({ changes: '[]' })).attributes['gateway.audit.changes'], '[]');
});

test('only a well-formed, non-zero trace id is carried', () => {
  assert.equal(recordOf(row({ traceId: '0af7651916cd43dd8448eb211c80319c' })).traceId, '0af7651916cd43dd8448eb211c80319c');
  for (const traceId of ['0'.repeat(32), 'xyz', '0af7651916cd43dd8448eb211c80319', '', null]) {
    assert.equal(recordOf(row({ traceId })).traceId, null, String(traceId));
  }
});

test('streams: changes and console sign-ins go with the console audit, the rest is the data plane\'s', () => {
  assert.equal(streamOf(row({ part: 'changes', targetKind: 'route' })), 'console');
  assert.equal(streamOf(row({ part: 'changes', targetKind: 'account' })), 'console');
  assert.equal(streamOf(row({ part: 'security', targetKind: 'console', action: 'signin' })), 'console');
  assert.equal(streamOf(row({ part: 'security', targetKind: 'account', action: 'signin' })), 'audit');
  assert.equal(streamOf(row({ part: 'security', targetKind: 'account', action: 'password.change' })), 'audit');
  assert.equal(streamOf(row({ part: 'operations', targetKind: 'operation' })), 'audit');
});

test('the endpoint gets /v1/logs once', () => {
  assert.equal(logsUrl('http://127.0.0.1:4318'), 'http://127.0.0.1:4318/v1/logs');
  assert.equal(logsUrl('http://127.0.0.1:4318/'), 'http://127.0.0.1:4318/v1/logs');
  assert.equal(logsUrl('https://otel.example.com/otlp'), 'https://otel.example.com/otlp/v1/logs');
  assert.equal(logsUrl('http://127.0.0.1:4318/v1/logs'), 'http://127.0.0.1:4318/v1/logs');
  assert.throws(() => logsUrl('not a url'));
});
