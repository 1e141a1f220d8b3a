import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalPath } from '../../src/pipeline/canonical-path.ts';
import { GatewayError } from '../../src/http/errors.ts';

test('canonical paths pass unchanged; repeated slashes are merged', () => {
  for (const p of ['/', '/orders/7', '/a.b/c..d/.well-known/x', '/files/v1.2.3', '/%2E%2Ex', '/...']) assert.equal(canonicalPath(p), p);
  assert.equal(canonicalPath('//orders///7//'), '/orders/7/');
});

test('dot segments are refused, plain or percent-encoded, anywhere', () => {
  for (const p of ['/public/../admin', '/./x', '/a/..', '/a/%2e%2e/b', '/a/%2E./b', '/a/.%2e', '/%2e', '/a//..//b']) {
    assert.throws(() => canonicalPath(p), (err: unknown) => err instanceof GatewayError && err.code === 'path.invalid', p);
  }
});
