import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalPath } from '../../src/pipeline/canonical-path.ts';
import { GatewayError } from '../../src/http/errors.ts';

test('canonical paths pass unchanged; repeated slashes are merged', () => {
  for (const p of ['/', '/orders/7', '/a.b/c..d/.well-known/x', '/files/v1.2.3', '/...', '/a;jsessionid=1/b', '/m;a=1;b=2']) assert.equal(canonicalPath(p), p);
  assert.equal(canonicalPath('//orders///7//'), '/orders/7/');
});

test('dot segments are refused, plain or percent-encoded, anywhere', () => {
  for (const p of ['/public/../admin', '/./x', '/a/..', '/a/%2e%2e/b', '/a/%2E./b', '/a/.%2e', '/%2e', '/a//..//b']) {
    assert.throws(() => canonicalPath(p), (err: unknown) => err instanceof GatewayError && err.code === 'path.invalid', p);
  }
});

test('escaped unreserved characters are decoded; other escapes stay as written', () => {
  const cases: Array<[string, string]> = [
    ['/%61dmin', '/admin'], ['/%41%5a%30%2D%5f%7E', '/AZ0-_~'], ['/%2E%2Ex', '/..x'], ['//%61//b', '/a/b'],
    ['/a%2Fb', '/a%2Fb'], ['/caf%C3%A9', '/caf%C3%A9'], ['/100%25', '/100%25'], ['/C%23', '/C%23'], ['/%zz/%4', '/%zz/%4'], ['/a%20b', '/a%20b'],
  ];
  for (const [raw, canonical] of cases) assert.equal(canonicalPath(raw), canonical, raw);
});

test('what a service could read as another path is refused: backslashes, a fragment, NUL, dot segments with parameters', () => {
  for (const p of ['/a\\b', '/x/..\\admin', '/a%5cb', '/a%5C..%5Cadmin', '/a#b', '/admin#', '/a%00b', '/x/..;/admin', '/x/.;a/b', '/a/;x/b', '/;x', '/a/%2e%2e;x/b', '/%2e;/admin', '/open/\u2713', '/a\ufffd', '/a b', '/a\u0001']) {
    assert.throws(() => canonicalPath(p), (err: unknown) => err instanceof GatewayError && err.code === 'path.invalid' && /backslash/.test(err.detail ?? ''), p);
  }
});

test('a dot segment that ends at an escaped slash is refused: services that decode %2F before they split read it as ..', () => {
  for (const p of ['/s/..%2f..%2fx', '/open/%2e%2e%2fadmin', '/a/x%2F..%2Fadmin', '/a/.%2fb', '/a/..%2F']) {
    assert.throws(() => canonicalPath(p), (err: unknown) => err instanceof GatewayError && err.code === 'path.invalid', p);
  }
  // An escaped slash alone, or beside dots that are no segment, stays as written.
  for (const p of ['/repos/group%2Fproject', '/a%2Fb.c', '/v1.2%2Fx', '/a%2F...%2Fb']) assert.equal(canonicalPath(p), p);
});
