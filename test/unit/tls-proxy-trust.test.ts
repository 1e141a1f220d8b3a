import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProxyTrust, parseProxyAddresses, PRIVATE_RANGES } from '../../src/http/trusted-proxies.ts';
import { GatewayError } from '../../src/http/errors.ts';

function refusal(list: unknown): GatewayError {
  try {
    parseProxyAddresses(list);
  } catch (err) {
    assert.ok(err instanceof GatewayError, `expected a GatewayError, got ${String(err)}`);
    assert.equal(err.code, 'tls.proxy-address-invalid');
    assert.equal(err.status, 400);
    assert.equal(err.field, 'proxyAddresses');
    assert.match(err.detail, /^\S.*\.$/);
    return err;
  }
  assert.fail(`${JSON.stringify(list)} was accepted`);
}

test('no proxy address declared: loopback and private ranges are believed, nothing else', () => {
  const trust = new ProxyTrust([]);
  assert.deepEqual(trust.ranges, PRIVATE_RANGES);
  for (const a of ['127.0.0.1', '127.9.9.9', '::1', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.254', '192.168.1.10', 'fd12:3456::1', 'fc00::1']) {
    assert.equal(trust.believes(a), true, a);
  }
  for (const a of ['8.8.8.8', '172.32.0.1', '172.15.255.255', '192.169.0.1', '11.0.0.1', '2001:db8::1', 'fe80::1', '169.254.169.254', '100.64.0.1', '::', '0.0.0.0']) {
    assert.equal(trust.believes(a), false, a);
  }
});

test('IPv4-mapped IPv6 peers match their IPv4 range, in every spelling', () => {
  const trust = new ProxyTrust(['203.0.113.0/24']);
  assert.equal(trust.believes('::ffff:203.0.113.9'), true);
  assert.equal(trust.believes('::FFFF:203.0.113.9'), true);
  assert.equal(trust.believes('0000:0000:0000:0000:0000:ffff:cb00:7109'), true);
  assert.equal(trust.believes('::ffff:203.0.114.9'), false);
  assert.equal(new ProxyTrust([]).believes('::ffff:10.1.2.3'), true);
  assert.equal(new ProxyTrust([]).believes('::ffff:8.8.8.8'), false);
});

test('declared addresses replace the private ranges: single addresses and ranges, v4 and v6', () => {
  const trust = new ProxyTrust(parseProxyAddresses(['192.0.2.7', '198.51.100.0/24', '2001:db8:1::/48', '2001:db8:9::5']));
  assert.equal(trust.believes('192.0.2.7'), true);
  assert.equal(trust.believes('192.0.2.8'), false);
  assert.equal(trust.believes('198.51.100.200'), true);
  assert.equal(trust.believes('2001:db8:1:ffff::1'), true);
  assert.equal(trust.believes('2001:db8:2::1'), false);
  assert.equal(trust.believes('2001:DB8:9::5'), true);
  assert.equal(trust.believes('127.0.0.1'), false, 'loopback is no longer believed once addresses are declared');
  assert.equal(trust.believes('10.0.0.1'), false);
});

test('peer addresses with brackets or a zone are read; anything else is not believed', () => {
  const trust = new ProxyTrust(['fe80::/10', '::1']);
  assert.equal(trust.believes('fe80::1%eth0'), true);
  assert.equal(trust.believes('[::1]'), true);
  for (const a of ['', 'localhost', 'not an address', '10.0.0.1:80', '999.1.1.1']) assert.equal(new ProxyTrust([]).believes(a), false, a);
});

test('entries are normalised and kept once', () => {
  assert.deepEqual(parseProxyAddresses([' 10.0.0.0/8 ', '2001:DB8::/32', '10.0.0.0/8', '192.0.2.7', '::ffff:10.0.0.0/104']),
    ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7', '::ffff:10.0.0.0/104']);
  assert.deepEqual(parseProxyAddresses([]), []);
  assert.equal(new ProxyTrust(['::ffff:10.0.0.0/104']).believes('10.20.30.40'), true);
  assert.equal(new ProxyTrust(['10.1.2.3/8']).believes('10.200.0.1'), true, 'host bits past the prefix are ignored, as a subnet reads them');
});

test('bad entries are refused with the entry and why', () => {
  assert.match(refusal('10.0.0.0/8').detail, /must be a list/);
  assert.match(refusal(['proxy.internal']).detail, /"proxy.internal", which is a host name/);
  assert.match(refusal(['10.0.0.0/33']).detail, /"10.0.0.0\/33", which has the prefix \/33, out of range for an IPv4 address \(1 to 32\)/);
  assert.match(refusal(['2001:db8::/129']).detail, /IPv6 address \(1 to 128\)/);
  assert.match(refusal(['10.0.0.0/abc']).detail, /prefix \/abc/);
  assert.match(refusal(['0.0.0.0/0']).detail, /would believe every address/);
  assert.match(refusal(['::/0']).detail, /would believe every address/);
  assert.match(refusal(['fe80::1%eth0']).detail, /carries a zone/);
  assert.match(refusal(['[::1]']).detail, /in brackets/);
  assert.match(refusal(['10.0.0.0/8/9']).detail, /is not an IP address or a CIDR range/);
  assert.match(refusal(['300.1.1.1']).detail, /is not an IP address or a CIDR range/);
  assert.match(refusal(['10.0.0.1', 7]).detail, /proxyAddresses\[1\] must be an IP address/);
  assert.match(refusal(['']).detail, /proxyAddresses\[0\]/);
  assert.match(refusal(Array.from({ length: 101 }, (_, i) => `10.0.0.${i % 250}`)).detail, /at most 100/);
  assert.throws(() => new ProxyTrust(['nonsense']), (err: unknown) => err instanceof GatewayError && err.code === 'tls.proxy-address-invalid');
});
