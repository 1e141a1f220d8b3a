import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonical, diff } from '../../src/core/audit/diff.ts';
import { MASK } from '../../src/core/audit/mask.ts';

const route = {
  id: 'orders', upstream: 'http://orders:8080', paths: ['/orders'], rule: { roles: ['ops', 'billing'] },
  organisation: 'acme', timeoutMs: 30_000, createdAt: 1, updatedAt: 2,
};

test('an update lists the moved scalars and nothing else', () => {
  assert.deepEqual(diff(route, { ...route, timeoutMs: 10_000, updatedAt: 3 }), [{ field: 'timeoutMs', from: 30_000, to: 10_000 }]);
  assert.deepEqual(diff(route, { ...route, organisation: 'globex' }), [{ field: 'organisation', from: 'acme', to: 'globex' }]);
});

test('an update that moves nothing gives an empty diff, whatever the key order or timestamps', () => {
  const reordered = { updatedAt: 99, rule: { roles: ['ops', 'billing'] }, timeoutMs: 30_000, organisation: 'acme', paths: ['/orders'], upstream: 'http://orders:8080', id: 'orders', createdAt: 1 };
  assert.deepEqual(diff(route, reordered), []);
  assert.deepEqual(diff({ a: null }, { b: undefined }), [], 'absent, null and undefined are all "not set"');
});

test('a change deep inside a nested object or list surfaces the whole field', () => {
  assert.deepEqual(diff(route, { ...route, rule: { roles: ['ops'] } }), [
    { field: 'rule', from: { roles: ['ops', 'billing'] }, to: { roles: ['ops'] } },
  ]);
  assert.deepEqual(diff({ rules: [{ m: 'GET', p: { a: 1 } }] }, { rules: [{ m: 'GET', p: { a: 2 } }] }), [
    { field: 'rules', from: [{ m: 'GET', p: { a: 1 } }], to: [{ m: 'GET', p: { a: 2 } }] },
  ]);
  assert.equal(canonical({ b: [1, { d: 1, c: 2 }], a: 'x' }), '{"a":"x","b":[1,{"c":2,"d":1}]}');
});

test('creation lists the fields set, deletion the fields removed', () => {
  assert.deepEqual(diff(null, { id: 'r', name: 'ops', implies: ['read'], note: null, createdAt: 5 }), [
    { field: 'name', from: null, to: 'ops' }, { field: 'implies', from: null, to: ['read'] },
  ]);
  assert.deepEqual(diff({ id: 'r', name: 'ops' }, null), [{ field: 'name', from: 'ops', to: null }]);
  assert.deepEqual(diff(null, null), []);
});

test('identifiers, server timestamps and display-only names are skipped; references and revocations are not', () => {
  const before = { id: 's1', routeId: 'orders', tokenId: 't1', displayName: 'Nightly', createdAt: 1, updatedAt: 1, lastUsedAt: 1, revokedAt: null };
  const after = { id: 's2', routeId: 'billing', tokenId: 't1', displayName: 'Nightly run', createdAt: 2, updatedAt: 2, lastUsedAt: 2, revokedAt: 1_700_000_000 };
  assert.deepEqual(diff(before, after, { skip: ['displayName'] }), [
    { field: 'routeId', from: 'orders', to: 'billing' },
    { field: 'revokedAt', from: null, to: 1_700_000_000 },
  ]);
});

test('a changed secret counts as a change and shows *** on both sides, at any depth', () => {
  assert.deepEqual(diff({ name: 'a', password: 'old-password' }, { name: 'a', password: 'new-password' }), [
    { field: 'password', from: MASK, to: MASK },
  ]);
  assert.deepEqual(diff({ name: 'a', password: 'same' }, { name: 'a', password: 'same' }), []);
  assert.deepEqual(diff({ auth: { user: 'u', secret: 's1' } }, { auth: { user: 'u', secret: 's2' } }), [
    { field: 'auth', from: { user: 'u', secret: MASK }, to: { user: 'u', secret: MASK } },
  ]);
  assert.deepEqual(diff({ password: null }, { password: 'set-now' }), [{ field: 'password', from: null, to: MASK }]);
  const png = `data:image/png;base64,${Buffer.alloc(2000).toString('base64')}`;
  assert.deepEqual(diff({ logo: null }, { logo: png }), [{ field: 'logo', from: null, to: 'image/png, 2.0 KB' }]);
});

test('prototype-like field names are compared as own fields', () => {
  const before = JSON.parse('{"__proto__": {"a": 1}, "name": "x"}') as Record<string, unknown>;
  const after = JSON.parse('{"__proto__": {"a": 2}, "name": "x"}') as Record<string, unknown>;
  assert.deepEqual(diff(before, after), [{ field: '__proto__', from: { a: 1 }, to: { a: 2 } }]);
  assert.deepEqual(diff({ name: 'x' }, { name: 'x' }), [], 'constructor, toString: never read from the prototype');
  assert.deepEqual(diff({}, JSON.parse('{"constructor": "c"}') as Record<string, unknown>), [{ field: 'constructor', from: null, to: 'c' }]);
});
