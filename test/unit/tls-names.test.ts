import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  certificateNameProblem, covers, declaredNameProblem, isIpAddress, normaliseHost, sharedNames, uncovered,
} from '../../src/core/tls/names.ts';

test('an exact name covers its host in any case and with a final dot', () => {
  assert.equal(covers(['Shop.Example.com'], 'shop.example.COM'), true);
  assert.equal(covers(['shop.example.com'], 'shop.example.com.'), true);
  assert.equal(covers(['shop.example.com.'], 'shop.example.com'), true);
  assert.equal(covers(['shop.example.com'], 'example.com'), false);
  assert.equal(covers(['shop.example.com'], ''), false);
  assert.equal(covers([], 'shop.example.com'), false);
});

test('a wildcard covers exactly one left-most label', () => {
  const names = ['*.example.com'];
  assert.equal(covers(names, 'a.example.com'), true);
  assert.equal(covers(names, 'A.EXAMPLE.COM.'), true);
  assert.equal(covers(names, 'example.com'), false);
  assert.equal(covers(names, 'a.b.example.com'), false);
  assert.equal(covers(names, '.example.com'), false);
  assert.equal(covers(names, 'aexample.com'), false);
  assert.equal(covers(['*.b.example.com'], 'a.b.example.com'), true);
  // What a wildcard stands for is one label of letters, digits and hyphens: a URL parser reads
  // these as another host (127.0.0.1, `evil`), so no certificate covers them.
  for (const host of ['2130706433?.example.com', 'evil/.example.com', 'evil\\.example.com', '1249767466#.example.com', 'a b.example.com', 'a@b.example.com', '-a.example.com']) {
    assert.equal(covers(names, host), false, host);
  }
  assert.equal(covers(names, 'a-1.example.com'), true);
});

test('an address covers the same address, IPv6 normalised and in brackets', () => {
  assert.equal(covers(['10.0.0.1'], '10.0.0.1'), true);
  assert.equal(covers(['10.0.0.1'], '10.0.0.2'), false);
  assert.equal(covers(['0:0:0:0:0:0:0:1'], '[::1]'), true);
  assert.equal(covers(['2001:DB8:0:0:0:0:0:1'], '2001:db8::1'), true);
  assert.equal(covers(['::1'], '[::1]:443'), false, 'the caller strips the port');
  // An address is never matched by a wildcard or a name spelled like it.
  assert.equal(covers(['*.0.0.1'], '10.0.0.1'), false);
});

test('uncovered lists the hosts no name covers; sharedNames the names both certificates answer', () => {
  assert.deepEqual(uncovered(['*.example.com', 'example.com'], ['a.example.com', 'example.com', 'a.b.example.com']), ['a.b.example.com']);
  assert.deepEqual(sharedNames(['a.example.com', 'b.example.com'], ['*.example.com']), ['a.example.com', 'b.example.com']);
  assert.deepEqual(sharedNames(['*.example.com'], ['*.EXAMPLE.com', 'x.org']), ['*.example.com']);
  assert.deepEqual(sharedNames(['a.example.com'], ['b.example.com', '*.a.example.com']), []);
  assert.deepEqual(sharedNames(['::1'], ['0:0::1']), ['::1']);
});

test('isIpAddress and normaliseHost', () => {
  for (const ip of ['127.0.0.1', '::1', '[::1]', '2001:db8::1', 'fe80::1%eth0']) assert.equal(isIpAddress(ip), true, ip);
  for (const name of ['example.com', '1.2.3', '[example.com]', '::1:443:x', '']) assert.equal(isIpAddress(name), false, name);
  assert.equal(normaliseHost('[2001:DB8:0:0::1]'), '2001:db8::1');
  assert.equal(normaliseHost(' Example.COM. '), 'example.com');
});

test('a declared name is a host name only, with the reason for each refusal', () => {
  for (const ok of ['example.com', 'app.example.com', 'localhost', 'Shop-1.example.com', 'xn--bcher-kva.example']) {
    assert.equal(declaredNameProblem(ok), null, ok);
  }
  const table: [string, RegExp][] = [
    ['https://example.com', /^names carry no scheme: write example.com, not https:\/\/example.com$/],
    ['http://example.com:8080/x', /no scheme: write example.com/],
    ['example.com/app', /^names carry no path: write example.com, not example.com\/app$/],
    ['example.com:8443', /^names carry no port: write example.com, not example.com:8443$/],
    ['10.0.0.1', /never an IP address/],
    ['10.0.0.1:80', /never an IP address/],
    ['::1', /never an IP address/],
    ['[::1]:443', /never an IP address/],
    ['*.example.com', /never a wildcard/],
    ['', /cannot be empty/],
    ['exa mple.com', /no spaces/],
    ['example.com.', /without its final dot/],
    ['a..example.com', /empty label/],
    ['.example.com', /empty label/],
    ['-a.example.com', /neither starts nor ends with a hyphen/],
    ['a_b.example.com', /letters, digits, hyphens and dots only/],
    ['bücher.example', /ASCII form/],
    ['1.2.3', /not all digits/],
    [`${'a'.repeat(64)}.example.com`, /at most 63 characters/],
    [Array.from({ length: 26 }, () => 'abcdefghi').join('.'), /at most 253 characters; this one has 259/],
  ];
  for (const [name, reason] of table) assert.match(declaredNameProblem(name) ?? 'accepted', reason, name);
});

test('a certificate name may be a one-label wildcard or an address', () => {
  for (const ok of ['example.com', '*.example.com', '*.a.example.com', '10.0.0.1', '::1', '2001:db8::1', 'localhost']) {
    assert.equal(certificateNameProblem(ok), null, ok);
  }
  const table: [string, RegExp][] = [
    ['*.com', /covers the names under a domain/],
    ['a.*.example.com', /whole left-most label only/],
    ['*a.example.com', /whole left-most label only/],
    ['*.*.example.com', /whole left-most label only/],
    ['[::1]', /without brackets: ::1/],
    ['[::1]:443', /no port: write \[::1\]/],
    ['fe80::1%eth0', /carries no zone/],
    ['example.com:443', /no port/],
    ['https://example.com', /no scheme/],
    ['*.exa_mple.com', /letters, digits, hyphens/],
  ];
  for (const [name, reason] of table) assert.match(certificateNameProblem(name) ?? 'accepted', reason, name);
});
