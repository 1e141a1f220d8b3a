import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HOP_BY_HOP } from '../../src/http/gateway-headers.ts';
import { headerRecord } from '../../src/http/header-record.ts';
import { forwardRequestHeaders, forwardResponseHeaders, type ForwardOptions } from '../../src/pipeline/forward-headers.ts';
import { IDENTITY_HEADERS } from '../../src/pipeline/identity.ts';

const opts = (more: Partial<ForwardOptions> = {}): ForwardOptions => ({
  remoteAddress: '203.0.113.7', secure: true, ownCookies: new Set(['mk_session']), dropAuthorization: false, via: '1.1 meerkat-0a1b2c3d', ...more,
});

test('request: end-to-end headers pass, the gateway states the forwarding facts', () => {
  const incoming = {
    host: 'shop.example.com:8443', accept: 'application/json', 'content-type': 'application/json',
    'content-length': '42', 'user-agent': 'curl/8', 'x-request-id': 'abc',
  };
  const out = forwardRequestHeaders(incoming, opts());
  assert.deepEqual({ ...out }, {
    accept: 'application/json', 'content-type': 'application/json', 'content-length': '42', 'user-agent': 'curl/8',
    'x-request-id': 'abc', via: '1.1 meerkat-0a1b2c3d', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example.com:8443',
  });
  assert.notEqual(out, incoming);
  assert.equal(incoming.host, 'shop.example.com:8443', 'the input is not altered');
  assert.equal(forwardRequestHeaders({}, opts({ secure: false }))['x-forwarded-proto'], 'http');
  assert.ok(!('x-forwarded-host' in forwardRequestHeaders({}, opts())), 'no host, no x-forwarded-host');
});

test('request: hop-by-hop, host, expect, identity and proxy-chain headers never pass', () => {
  const incoming: Record<string, string> = { accept: '*/*' };
  for (const name of [...HOP_BY_HOP, ...IDENTITY_HEADERS]) incoming[name] = 'spoofed';
  Object.assign(incoming, {
    expect: '100-continue', forwarded: 'for=1.2.3.4', 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'https',
    'x-forwarded-host': 'evil', 'x-real-ip': '1.2.3.4', 'x-forwarded-port': '1', 'x-forwarded-prefix': '/evil', connection: 'keep-alive',
  });
  const out = forwardRequestHeaders(incoming, opts({ secure: false }));
  assert.deepEqual({ ...out }, { accept: '*/*', via: '1.1 meerkat-0a1b2c3d', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'http' });
});

test('request: names listed in Connection are dropped, except content-length', () => {
  const out = forwardRequestHeaders({
    connection: 'Keep-Alive, X-Private , x-other,,', 'x-private': '1', 'x-other': '2', 'x-kept': '3', 'content-length': '5',
  }, opts());
  assert.equal(out['x-private'], undefined);
  assert.equal(out['x-other'], undefined);
  assert.equal(out['x-kept'], '3');
  assert.equal(out['content-length'], '5');
  const sneaky = forwardRequestHeaders({ connection: 'content-length, x-forwarded-for', 'content-length': '5' }, opts());
  assert.equal(sneaky['content-length'], '5');
  assert.equal(sneaky['x-forwarded-for'], '203.0.113.7', 'Connection cannot remove what the gateway adds');
});

test('request: the gateway session cookie stays at the gateway', () => {
  const mixed = forwardRequestHeaders({ cookie: 'theme=dark; mk_session=s3cr3t; lang=fr' }, opts());
  assert.equal(mixed.cookie, 'theme=dark; lang=fr');
  assert.equal(forwardRequestHeaders({ cookie: 'mk_session=s3cr3t' }, opts()).cookie, undefined, 'nothing left, no header');
  assert.ok(!('cookie' in forwardRequestHeaders({ cookie: ' mk_session=a ;mk_session=b; ' }, opts())));
  assert.equal(forwardRequestHeaders({ cookie: 'a=1; b=2' }, opts()).cookie, 'a=1; b=2', 'untouched when none is ours');
  assert.equal(forwardRequestHeaders({ cookie: 'mk_session_x=1; xmk_session=2; v=mk_session' }, opts()).cookie,
    'mk_session_x=1; xmk_session=2; v=mk_session', 'only the exact name is ours');
  assert.equal(forwardRequestHeaders({ cookie: 'MK_SESSION=1' }, opts()).cookie, 'MK_SESSION=1', 'cookie names are case-sensitive');
  assert.equal(forwardRequestHeaders({ cookie: 'mk_session; a=1' }, opts()).cookie, 'mk_session; a=1', 'a nameless cookie is not ours');
  assert.equal(forwardRequestHeaders({ cookie: 'mk_session=1' }, opts({ ownCookies: new Set() })).cookie, 'mk_session=1');
  const two = forwardRequestHeaders({ cookie: 'a=1; mk_csrf=x; mk_session=y' }, opts({ ownCookies: new Set(['mk_session', 'mk_csrf']) }));
  assert.equal(two.cookie, 'a=1');
});

test('request: Authorization passes unless the caller used a gateway token', () => {
  assert.equal(forwardRequestHeaders({ authorization: 'Bearer up' }, opts()).authorization, 'Bearer up');
  assert.ok(!('authorization' in forwardRequestHeaders({ authorization: 'Bearer mk_x' }, opts({ dropAuthorization: true }))));
});

test('request: HTTP/2 pseudo-headers are not forwarded', () => {
  assert.deepEqual(Object.keys(forwardRequestHeaders({ ':authority': 'x', accept: 'a' }, opts())).sort(),
    ['accept', 'via', 'x-forwarded-for', 'x-forwarded-proto']);
});

test('request: the whole x-forwarded- family, path overrides and underscore spellings of what the gateway writes never pass', () => {
  const incoming: Record<string, string> = {
    accept: '*/*', 'x-forwarded-server': 'evil', 'x-forwarded-uri': '/admin', 'x-forwarded-scheme': 'https', 'x-forwarded-ssl': 'on',
    'x-original-url': '/admin', 'x-rewrite-url': '/admin', x_gateway_user: 'evil', x_gateway_roles: 'admin', remote_user: 'evil',
    x_forwarded_for: '1.2.3.4', x_real_ip: '1.2.3.4', 'x_gateway-identity': 'forged', x_request_id: 'kept', 'x-forwardedx': 'kept',
    'x-http-method-override': 'DELETE', 'x-method-override': 'DELETE', x_http_method: 'DELETE', 'x-forwarded': 'for=1.2.3.4', 'true-client-ip': '1.2.3.4',
    'x-client-ip': '1.2.3.4', 'x-cluster-client-ip': '1.2.3.4', 'gateway-job-run': 'run_forged', gateway_job: 'sch_other',
    'client-ip': '1.2.3.4', 'cf-connecting-ip': '1.2.3.4', 'fastly-client-ip': '1.2.3.4', 'x-original-forwarded-for': '1.2.3.4',
    'x-host': 'evil.example', 'x-original-host': 'evil.example', 'x-original-uri': '/admin', 'x-gateway-organization': 'acme',
  };
  const out = forwardRequestHeaders(incoming, opts({ secure: false }));
  assert.deepEqual({ ...out }, { accept: '*/*', x_request_id: 'kept', 'x-forwardedx': 'kept', via: '1.1 meerkat-0a1b2c3d', 'x-forwarded-for': '203.0.113.7', 'x-forwarded-proto': 'http' });
});

test('response: a service never sets the gateway\'s own session cookies; its other cookies pass', () => {
  const own = new Set(['mk_session', 'mk_app']);
  const out = forwardResponseHeaders({ 'set-cookie': ['a=1; Path=/', 'mk_session=tossed; Path=/api', ' mk_app =x', 'mk_sessionx=1'] }, own);
  assert.deepEqual(out['set-cookie'], ['a=1; Path=/', 'mk_sessionx=1']);
  assert.ok(!('set-cookie' in forwardResponseHeaders({ 'set-cookie': 'mk_session=tossed', etag: '"1"' }, own)), 'nothing left, no header');
  assert.equal(forwardResponseHeaders({ 'set-cookie': 'mk_session=kept' })['set-cookie'], 'mk_session=kept', 'no own cookies named: as it came');
});

test('response: hop-by-hop and Connection-listed headers stay behind; arrays stay arrays', () => {
  const upstream: Record<string, string | string[] | undefined> = {
    'content-type': 'text/html', 'content-length': '10', 'set-cookie': ['a=1; Path=/', 'b=2; HttpOnly'],
    connection: 'keep-alive, x-upstream-private', 'keep-alive': 'timeout=5', 'transfer-encoding': 'chunked',
    'x-upstream-private': 'p', vary: ['accept', 'origin'], etag: '"1"', missing: undefined,
  };
  const out = forwardResponseHeaders(upstream);
  assert.deepEqual({ ...out }, {
    'content-type': 'text/html', 'content-length': '10', 'set-cookie': ['a=1; Path=/', 'b=2; HttpOnly'],
    vary: ['accept', 'origin'], etag: '"1"',
  });
  for (const name of HOP_BY_HOP) assert.ok(!(name in forwardResponseHeaders({ [name]: 'x', a: 'b' })), name);
});

test('response: a repeated Connection header (array) is read whole', () => {
  const out = forwardResponseHeaders({ connection: ['close', 'X-A'], 'x-a': '1', 'x-b': '2' });
  assert.deepEqual({ ...out }, { 'x-b': '2' });
  assert.deepEqual({ ...forwardResponseHeaders({ connection: 'content-length', 'content-length': '3' }) }, { 'content-length': '3' });
  assert.deepEqual({ ...forwardResponseHeaders({}) }, {});
});

test('headers named like built-in properties are headers both ways, never inherited nor lost', () => {
  const names = ['constructor', '__proto__', 'tostring', 'toString', 'valueof', 'hasownproperty'];
  const incoming = headerRecord();
  for (const n of names) incoming[n] = `v-${n}`;
  const out = forwardRequestHeaders(incoming, opts());
  for (const n of names) assert.ok(Object.hasOwn(out, n) && out[n] === `v-${n}`, `${n} passes upstream`);
  const back = forwardResponseHeaders(incoming);
  for (const n of names) assert.ok(Object.hasOwn(back, n) && back[n] === `v-${n}`, `${n} comes back`);
  assert.equal(forwardRequestHeaders(headerRecord(), opts())['constructor'], undefined, 'an absent name reads as absent');
});

test('request: the gateway adds its Via entry after the caller\'s (RFC 9110 7.6.3)', () => {
  assert.equal(forwardRequestHeaders({}, opts()).via, '1.1 meerkat-0a1b2c3d');
  assert.equal(forwardRequestHeaders({ via: '1.1 edge-proxy, 2 cdn' }, opts()).via, '1.1 edge-proxy, 2 cdn, 1.1 meerkat-0a1b2c3d');
  assert.equal(forwardRequestHeaders({}, opts({ remoteAddress: null })).via, '1.1 meerkat-0a1b2c3d', 'a call the gateway makes itself names it too');
});
