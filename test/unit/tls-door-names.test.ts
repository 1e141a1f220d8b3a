import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkDeclaredNames, namesTakenByOtherPlane, nameTakenRefusal, MAX_DECLARED_NAMES } from '../../src/core/tls/door-names.ts';
import { GatewayError } from '../../src/http/errors.ts';

function refusal(names: unknown, field?: string): GatewayError {
  try {
    checkDeclaredNames(names, field);
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.code, 'tls.name-invalid');
    assert.equal(err.status, 400);
    assert.equal(err.field, field ?? 'names');
    assert.match(err.detail, /^\S.*\.$/);
    return err;
  }
  assert.fail(`${JSON.stringify(names)} was accepted`);
}

test('host names are kept lower-cased, each once, in the order given', () => {
  assert.deepEqual(checkDeclaredNames(['Shop.Example.com', 'console.example.com', 'shop.example.com', ' api.example.com ', 'www.example.com.']),
    ['shop.example.com', 'console.example.com', 'api.example.com', 'www.example.com']);
  assert.deepEqual(checkDeclaredNames([]), []);
  assert.deepEqual(checkDeclaredNames(['localhost', 'xn--bcher-kva.example', 'a-b.c1.example']), ['localhost', 'xn--bcher-kva.example', 'a-b.c1.example']);
  assert.deepEqual(checkDeclaredNames(['Bücher.example']), ['xn--bcher-kva.example'], 'an IDN in its ASCII form, as SNI carries it');
});

test('each refusal names the name and the reason', () => {
  const cases: Array<[string, RegExp]> = [
    ['https://shop.example.com', /"https:\/\/shop.example.com" has a scheme \(https:\/\/\); declare the host name alone\./],
    ['shop.example.com:8443', /"shop.example.com:8443" has a port \(:8443\)/],
    ['shop.example.com/console', /"shop.example.com\/console" has a path/],
    ['shop.example.com?x=1', /has a path/],
    ['192.0.2.7', /"192.0.2.7" is an IP address/],
    ['2001:db8::1', /"2001:db8::1" is an IP address/],
    ['[::1]', /is an IP address/],
    ['10.1', /"10.1" is an IP address/],
    ['example.0x7f', /is an IP address/],
    ['*.example.com', /"\*.example.com" is a wildcard/],
    ['shop*.example.com', /is a wildcard/],
    ['shop_1.example.com', /"shop_1.example.com" is not a host name/],
    ['-shop.example.com', /is not a host name/],
    ['shop..example.com', /is not a host name/],
    ['shop example.com', /is not a host name/],
    ['user@shop.example.com', /is not a host name/],
    ['shop:example', /is not a host name/],
    [`${'a'.repeat(64)}.example.com`, /is not a host name/],
    [Array.from({ length: 60 }, () => 'abcd').join('.'), /is not a host name/],
  ];
  for (const [name, reason] of cases) assert.match(refusal(['ok.example.com', name]).detail, reason, name);
});

test('a list is required, of at most 50 names once duplicates are gone', () => {
  assert.match(refusal('shop.example.com').detail, /names must be a list of host names/);
  assert.match(refusal(['ok.example.com', 3]).detail, /names\[1\] must be a host name/);
  assert.match(refusal(['']).detail, /names\[0\]/);
  const many = Array.from({ length: MAX_DECLARED_NAMES + 1 }, (_, i) => `n${i}.example.com`);
  assert.match(refusal(many).detail, /at most 50 names/);
  assert.equal(checkDeclaredNames([...many.slice(0, 50), ...many.slice(0, 50)]).length, 50);
  assert.equal(refusal(['https://x.example.com'], 'doors.app.names').field, 'doors.app.names');
});

test('a name belongs to one plane: the first clash, or null', () => {
  assert.equal(namesTakenByOtherPlane(['shop.example.com', 'console.example.com', 'api.example.com'], ['api.example.com', 'Console.example.com']), 'console.example.com');
  assert.equal(namesTakenByOtherPlane(['shop.example.com'], ['console.example.com']), null);
  assert.equal(namesTakenByOtherPlane([], ['console.example.com']), null);
  const err = nameTakenRefusal('console.example.com', 'console');
  assert.equal(err.code, 'tls.name-invalid');
  assert.equal(err.field, 'names');
  assert.equal(err.detail, '"console.example.com" is declared by the console plane; a name belongs to one plane.');
});
