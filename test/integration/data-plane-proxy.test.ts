/**
 * The data plane as a reverse proxy, through real sockets: a gateway on port 0 and real upstream
 * services (node:http). What reaches the upstream, what comes back, bodies streamed both ways,
 * and the refusals when the upstream cannot be reached or does not answer.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, createServer as createNetServer, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { request } from 'undici';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn, type Answer } from '../helpers/http.ts';
import { closedPort, pattern, patternSha256, rawRequest, rawService, startUpstream, type Upstream } from '../helpers/upstream.ts';

let t: TestGateway;
let c: string;
let d: string;
let dataPort: number;
let admin: Record<string, string>;
/** The main echo service. */
let up: Upstream;
/** A second and third service, to tell which route served a request. */
let upB: Upstream;
let upC: Upstream;
/** A service that answers what a test asks. */
let custom: Upstream;
/** A service that never answers. */
let silent: Upstream;
let token: string;

async function put(path: string, body: unknown): Promise<Answer> {
  const a = await call(`${c}${path}`, { method: 'PUT', headers: admin, body });
  assert.ok(a.status === 200 || a.status === 201, `PUT ${path}: ${a.status} ${a.text}`);
  return a;
}

/** The echo's JSON view of the request it received. */
function echoed(a: Answer): { method: string; url: string; headers: Record<string, string | string[] | undefined>; bodyLength: number; body: string } {
  assert.equal(a.status, 200, a.text);
  return a.json;
}

before(async () => {
  t = await startTestGateway();
  c = t.url('control');
  d = t.url('data');
  dataPort = Number(new URL(d).port);
  const cookie = await signIn(c, 'root', ROOT_PASSWORD);
  admin = { cookie, origin: c };
  [up, upB, upC, custom, silent] = await Promise.all([
    startUpstream(), startUpstream(), startUpstream(), startUpstream(), startUpstream(() => undefined),
  ]);
  await put('/api/roles/staff', {});
  await put('/api/routes/orders', { upstream: `${up.origin}/base`, paths: ['/orders'], rule: null });
  await put('/api/routes/svc', { upstream: `${up.origin}/inner`, paths: ['/svc'], stripPrefix: true, rule: null });
  await put('/api/routes/root-strip', { upstream: up.origin, paths: ['/bare/'], stripPrefix: true, rule: null });
  await put('/api/routes/api', { upstream: upB.origin, paths: ['/api'], rule: null });
  await put('/api/routes/api-v2', { upstream: upC.origin, paths: ['/api/v2'], rule: null });
  await put('/api/routes/host-named', { upstream: upB.origin, paths: ['/h'], hosts: ['api.example.test'], rule: null });
  await put('/api/routes/host-less', { upstream: upC.origin, paths: ['/h'], rule: null });
  await put('/api/routes/host-only', { upstream: upB.origin, paths: ['/only-host'], hosts: ['only.example.test'], rule: null });
  await put('/api/routes/private', { upstream: up.origin, paths: ['/private'], rule: { roles: ['staff'] } });
  await put('/api/routes/custom', { upstream: custom.origin, paths: ['/custom'], rule: null });
  await put('/api/routes/silent', { upstream: silent.origin, paths: ['/silent'], rule: null, timeout: 'PT1S' });
  await put('/api/routes/down', { upstream: `http://127.0.0.1:${await closedPort()}`, paths: ['/down'], rule: null });
  const acc = await call(`${c}/api/accounts`, { method: 'POST', headers: admin, body: { name: 'alice', password: 'alice-password-1', roles: ['staff'] } });
  assert.equal(acc.status, 201, acc.text);
  const tok = await call(`${c}/api/tokens`, { method: 'POST', headers: admin, body: { name: 'alice-app', kind: 'personal', account: 'alice' } });
  assert.equal(tok.status, 201, tok.text);
  token = tok.json.token;
  assert.match(token, /^mk_/);
});

after(async () => {
  await t?.close();
  await Promise.all([up, upB, upC, custom, silent].map((u) => u?.close()));
});

test('method, path and query reach the upstream, under its base path', async () => {
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
    const body = method === 'GET' ? undefined : { a: 1 };
    const a = await call(`${d}/orders/1?x=2&y=%20z`, { method, ...(body ? { body } : {}) });
    const seen = echoed(a);
    assert.equal(seen.method, method);
    assert.equal(seen.url, '/base/orders/1?x=2&y=%20z', method);
  }
  const exact = echoed(await call(`${d}/orders`));
  assert.equal(exact.url, '/base/orders');
  const encoded = echoed(await call(`${d}/orders/a%2Fb/%C3%A9t%C3%A9`));
  assert.equal(encoded.url, '/base/orders/a%2Fb/%C3%A9t%C3%A9', 'the path travels as received, still percent-encoded');
});

test('stripPrefix removes the matched prefix before the base path is prepended', async () => {
  assert.equal(echoed(await call(`${d}/svc/a/b?q=1`)).url, '/inner/a/b?q=1');
  assert.match(echoed(await call(`${d}/svc`)).url, /^\/inner\/?$/);
  assert.match(echoed(await call(`${d}/svc?only=query`)).url, /^\/inner\/?\?only=query$/);
  // A slash-terminated prefix on a root upstream: the forwarded path still starts with '/'.
  assert.equal(echoed(await call(`${d}/bare/x/y`)).url, '/x/y');
});

test('the longest prefix wins across routes, on segment boundaries', async () => {
  const v2 = await call(`${d}/api/v2/things`);
  assert.equal(v2.status, 200);
  assert.equal(upC.last().url, '/api/v2/things');
  const v1 = await call(`${d}/api/things`);
  assert.equal(v1.status, 200);
  assert.equal(upB.last().url, '/api/things');
  const v20 = await call(`${d}/api/v20`);
  assert.equal(v20.status, 200);
  assert.equal(upB.last().url, '/api/v20', '/api/v2 does not take /api/v20');
  const beforeC = upC.requests.length;
  await call(`${d}/api/v2`);
  assert.equal(upC.requests.length, beforeC + 1, '/api/v2 itself goes to the /api/v2 route');
});

test('a prefix does not take a longer segment: /orders does not serve /ordersx', async () => {
  const before = up.requests.length;
  const a = await call(`${d}/ordersx`);
  assert.equal(a.status, 404);
  assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
  assert.equal(a.json.code, 'route.unknown');
  assert.equal((await call(`${d}/orders-old/1`)).json?.code, 'route.unknown');
  assert.equal((await call(`${d}/nothing/here`)).json?.code, 'route.unknown');
  assert.equal(up.requests.length, before, 'nothing reached the upstream');
});

test('the Host header chooses among routes; a host-less route is the fallback', async () => {
  const named = await call(`${d}/h/1`, { headers: { host: 'api.example.test' } });
  assert.equal(named.status, 200);
  assert.equal(upB.last().url, '/h/1');
  const cased = await call(`${d}/h/2`, { headers: { host: 'API.Example.TEST:8080' } });
  assert.equal(cased.status, 200);
  assert.equal(upB.last().url, '/h/2', 'host case and port do not matter');
  const other = await call(`${d}/h/3`, { headers: { host: 'other.example.test' } });
  assert.equal(other.status, 200);
  assert.equal(upC.last().url, '/h/3', 'another host falls back to the host-less route');
  const plain = await call(`${d}/h/4`);
  assert.equal(plain.status, 200);
  assert.equal(upC.last().url, '/h/4');
  const onlyOk = await call(`${d}/only-host/x`, { headers: { host: 'only.example.test' } });
  assert.equal(onlyOk.status, 200);
  const onlyOther = await call(`${d}/only-host/x`, { headers: { host: 'elsewhere.example.test' } });
  assert.equal(onlyOther.status, 404);
  assert.equal(onlyOther.json.code, 'route.unknown');
});

test('hop-by-hop request headers stay at the gateway; end-to-end ones pass', async () => {
  const variants = [
    'Connection: keep-alive, X-Secret-Hop\r\n',
    // Two Connection fields are one list.
    'Connection: keep-alive\r\nConnection: X-Secret-Hop\r\n',
  ];
  for (const connection of variants) {
    const r = await rawRequest(dataPort, `GET /orders/hop?q=1 HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\n${connection}`
      + 'X-Secret-Hop: must-not-pass\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: websocket\r\n'
      + 'Proxy-Connection: keep-alive\r\nX-Kept: yes\r\n\r\n');
    assert.equal(r.status, 200, r.head);
    const seen = up.last();
    assert.equal(seen.url, '/base/orders/hop?q=1');
    for (const name of ['x-secret-hop', 'keep-alive', 'te', 'upgrade', 'proxy-connection']) {
      assert.equal(seen.headers[name], undefined, `${name} must not reach the upstream (${connection.trim()})`);
    }
    assert.ok(seen.headers.connection === undefined || /^(keep-alive|close)$/i.test(String(seen.headers.connection)),
      `the upstream sees the gateway's own connection, not the client's: ${String(seen.headers.connection)}`);
    assert.equal(seen.headers['x-kept'], 'yes');
  }
});

test('hop-by-hop response headers stay at the gateway; the others come back', async () => {
  custom.handle((_req, res) => {
    res.setHeader('connection', 'keep-alive, x-up-private');
    res.setHeader('keep-alive', 'timeout=5');
    res.setHeader('x-up-private', 'internal detail');
    res.setHeader('upgrade', 'h2c');
    res.setHeader('proxy-connection', 'keep-alive');
    res.setHeader('x-public', 'visible');
    res.setHeader('content-type', 'text/plain');
    res.end('hello');
  });
  const r = await rawRequest(dataPort, `GET /custom/hop HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\n\r\n`);
  assert.equal(r.status, 200, r.head);
  assert.equal(r.body, 'hello');
  const names = r.headerLines.map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
  for (const name of ['x-up-private', 'keep-alive', 'upgrade', 'proxy-connection']) {
    assert.ok(!names.includes(name), `${name} must not reach the client:\n${r.head}`);
  }
  const connection = r.headerLines.filter((l) => /^connection:/i.test(l));
  for (const l of connection) assert.doesNotMatch(l, /x-up-private/i, 'the upstream\'s Connection list stays behind');
  assert.ok(r.headerLines.some((l) => /^x-public: visible$/i.test(l)), r.head);
  custom.handle(undefined);
});

test('an answer header holding obs-text reaches the client byte for byte', async () => {
  // Written as bytes: one Latin-1 é (0xE9), and the same word in UTF-8 (0xC3 0xA9).
  const svc = await rawService((_head, socket) => {
    socket.write(Buffer.concat([
      Buffer.from('HTTP/1.1 200 OK\r\nx-latin: caf'), Buffer.from([0xe9]), Buffer.from(' ok\r\nx-utf8: caf'), Buffer.from([0xc3, 0xa9]),
      Buffer.from(' ok\r\ncontent-length: 2\r\n\r\nok'),
    ]));
  });
  await put('/api/routes/obs', { upstream: svc.origin, paths: ['/obs'], rule: null });
  const r = await rawRequest(dataPort, `GET /obs/x HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\nConnection: close\r\n\r\n`);
  svc.server.close();
  assert.equal(r.status, 200, r.head);
  // rawRequest reads Latin-1, one character a byte: a UTF-8 re-encoding would show as more.
  assert.ok(r.headerLines.includes('x-latin: caf\u00e9 ok'), r.head);
  assert.ok(r.headerLines.includes('x-utf8: caf\u00c3\u00a9 ok'), r.head);
});

test('headers named like built-in properties pass both ways as they are', async () => {
  // Names every object inherits (or sets its prototype with): read from a plain object, they would
  // be functions, or vanish.
  const names = ['constructor', '__proto__', 'tostring', 'hasownproperty', 'valueof'];
  custom.handle((_req, res) => {
    for (const n of names) res.setHeader(n, `answer-${n}`);
    res.end('ok');
  });
  const r = await rawRequest(dataPort, `GET /custom/proto HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\n`
    + names.map((n) => `${n}: asked-${n}\r\n`).join('') + '\r\n');
  assert.equal(r.status, 200, r.head);
  for (const n of names) assert.ok(r.headerLines.includes(`${n}: answer-${n}`), `${n} comes back:\n${r.head}`);
  custom.handle(undefined);
  const e = await rawRequest(dataPort, `GET /orders/proto HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\n`
    + names.map((n) => `${n}: asked-${n}\r\n`).join('') + '\r\n');
  assert.equal(e.status, 200, e.head);
  // node:http's own record of headers drops __proto__: its raw list shows what arrived.
  const raw = up.last().rawHeaders;
  const arrived = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) arrived.set(raw[i]!.toLowerCase(), raw[i + 1]!);
  for (const n of names) assert.equal(arrived.get(n), `asked-${n}`, `${n} reaches the upstream`);
});

test('X-Forwarded-For is the client address; forged proxy headers never pass; proto is http', async () => {
  const a = await call(`${d}/orders/xff`, {
    headers: {
      'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', forwarded: 'for=6.6.6.6;proto=https', 'x-real-ip': '6.6.6.6',
    },
  });
  const seen = echoed(a);
  assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(seen.headers['x-forwarded-proto'], 'http');
  assert.equal(seen.headers.forwarded, undefined);
  assert.equal(seen.headers['x-real-ip'], undefined);
  assert.doesNotMatch(JSON.stringify(up.last().rawHeaders), /6\.6\.6\.6/, 'the forged address appears nowhere upstream');
  const plain = echoed(await call(`${d}/orders/xff`));
  assert.equal(plain.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(plain.headers['x-forwarded-proto'], 'http');
});

test('the gateway adds its Via entry after the caller\'s, and refuses a request that carries its own (route.loop)', async () => {
  const seen = echoed(await call(`${d}/orders/via`, { headers: { via: '1.1 edge-proxy' } }));
  const via = String(seen.headers.via);
  assert.match(via, /^1\.1 edge-proxy, 1\.1 meerkat-[0-9a-f]{8}$/);
  assert.match(String(echoed(await call(`${d}/orders/via`)).headers.via), /^1\.1 meerkat-[0-9a-f]{8}$/);
  // The entry came back: the request went through this gateway already.
  const before = up.requests.length;
  const back = await call(`${d}/orders/via`, { headers: { via } });
  assert.equal(back.status, 508, back.text);
  assert.equal(back.json.code, 'route.loop');
  assert.equal(up.requests.length, before, 'the refused request never reached the service');
});

test('the gateway token never reaches the upstream; the service\'s own Authorization does', async () => {
  const onPrivate = await call(`${d}/private/x`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(onPrivate.status, 200, onPrivate.text);
  assert.equal(up.last().headers.authorization, undefined);
  assert.doesNotMatch(JSON.stringify(up.last().rawHeaders), /mk_/);
  const onOpen = await call(`${d}/orders/x`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(onOpen.status, 200);
  assert.equal(up.last().headers.authorization, undefined, 'a gateway token on an open route stays behind too');
  const basic = await call(`${d}/orders/x`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
  assert.equal(basic.status, 200);
  assert.equal(up.last().headers.authorization, 'Basic dXNlcjpwYXNz');
  const serviceBearer = await call(`${d}/orders/x`, { headers: { authorization: 'Bearer service-own.jwt.value' } });
  assert.equal(serviceBearer.status, 200);
  assert.equal(up.last().headers.authorization, 'Bearer service-own.jwt.value');

  // A live token beside other credentials (two Authorization lines, joined by the door) or in the
  // query string is refused, never passed on; a token-like text that opens nothing passes.
  const seen = up.requests.length;
  const twoLines = await rawRequest(dataPort, `GET /orders/two HTTP/1.1\r\nHost: x\r\nAuthorization: Basic Zm9vOmJhcg==\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
  assert.equal(twoLines.status, 401);
  assert.equal(JSON.parse(twoLines.body).code, 'unauthenticated');
  assert.equal((await call(`${d}/orders/one`, { headers: { authorization: `Basic Zm9v, Bearer ${token}` } })).status, 401);
  const query = await call(`${d}/orders/q?access_token=${token}`);
  assert.equal(query.status, 401);
  assert.match(query.json.detail, /never in the query string/);
  // Escaped as a decoder reads it back: `mk%5F…`, every character escaped, escaped twice.
  const escapedOnce = token.replace('_', '%5F');
  const everyChar = [...token].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  for (const q of [`access_token=${escapedOnce}`, `t=${everyChar}`, `t=${token.replace('_', '%255F')}`, `a=%zz&t=${escapedOnce}`]) {
    const escaped = await call(`${d}/orders/q?${q}`);
    assert.equal(escaped.status, 401, `${q}: ${escaped.text}`);
  }
  assert.equal(up.requests.length, seen, 'nothing reached the service');
  const lookalike = `mk_${'A'.repeat(43)}`;
  assert.equal((await call(`${d}/orders/q?ref=${lookalike}`)).status, 200);
  assert.equal(up.last().url, `/base/orders/q?ref=${lookalike}`);
});

test('the gateway\'s session cookie is taken out of Cookie; other cookies pass', async () => {
  const mixed = echoed(await call(`${d}/orders/c`, { headers: { cookie: 'theme=dark; mk_session=mks_secret_value; lang=fr' } }));
  assert.equal(mixed.headers.cookie, 'theme=dark; lang=fr');
  const only = echoed(await call(`${d}/orders/c`, { headers: { cookie: 'mk_session=mks_secret_value' } }));
  assert.equal(only.headers.cookie, undefined, 'nothing left: no Cookie header at all');
  const lookalike = echoed(await call(`${d}/orders/c`, { headers: { cookie: 'xmk_session=1; mk_session_pref=2' } }));
  assert.equal(lookalike.headers.cookie, 'xmk_session=1; mk_session_pref=2', 'only the exact name is the gateway\'s');
  assert.doesNotMatch(JSON.stringify(up.requests.slice(-3).map((r) => r.rawHeaders)), /mks_secret_value/);
});

test('a request head of up to 16 KiB passes (a large cookie, a JWT); a larger one is refused with 431', async () => {
  const cookie = `big=${'x'.repeat(12 * 1024)}`;
  const seen = echoed(await call(`${d}/orders/big-head`, { headers: { cookie, authorization: `Bearer ${'e'.repeat(2000)}.${'p'.repeat(1000)}.s` } }));
  assert.equal(seen.headers.cookie, cookie);
  const over = await call(`${d}/orders/big-head`, { headers: { cookie: `big=${'x'.repeat(17 * 1024)}` } });
  assert.equal(over.status, 431);
});

test('a method or a header value HTTP/1.1 cannot carry is refused with 400 request.invalid, never sent on nor a 502', async () => {
  const seen = up.requests.length;
  const refusals = [
    `G"E{T /orders/m HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\n\r\n`,
    `GET /orders/m HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\nX-Note: a\x7fb\r\n\r\n`,
    // Read as UTF-8 by the plain door: a character past Latin-1 cannot be written back byte for byte.
    `GET /orders/m HTTP/1.1\r\nHost: 127.0.0.1:${dataPort}\r\nX-Note: 5 \u20ac net\r\n\r\n`,
  ];
  for (const text of refusals) {
    const r = await rawRequest(dataPort, text);
    assert.equal(r.status, 400, `${JSON.stringify(text.slice(0, 60))}: ${r.head}`);
    assert.equal(JSON.parse(r.body).code, 'request.invalid');
  }
  assert.equal(up.requests.length, seen, 'nothing reached the service');
  assert.equal(echoed(await call(`${d}/orders/m`, { headers: { 'x-note': 'plain text, 100% ascii' } })).headers['x-note'], 'plain text, 100% ascii');
  // Two Host lines (joined by the door), and a Host that is no host name: what the gateway repeats
  // as X-Forwarded-Host and a signed identity's issuer must be one.
  for (const host of ['Host: a.example\r\nHost: b.example', 'Host: evil.example/a?b', 'Host: user@evil.example']) {
    const r = await rawRequest(dataPort, `GET /orders/h HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`);
    assert.equal(r.status, 400, `${host}: ${r.head}`);
    assert.equal(JSON.parse(r.body).code, 'request.invalid');
  }
  assert.equal(up.requests.length, seen + 1);
  assert.equal(echoed(await call(`${d}/orders/h`, { headers: { host: 'shop.example:8080' } })).headers['x-forwarded-host'], 'shop.example:8080');
});

test('a service cannot set the gateway\'s own session cookies: its other cookies come back', async () => {
  custom.handle((req, res) => {
    const big = new URL(req.url ?? '/', 'http://x').searchParams.has('big');
    res.setHeader('set-cookie', ['mk_session=tossed; Path=/api', 'a=1; Path=/', 'mk_app=tossed']);
    res.writeHead(200, { 'content-type': 'text/plain' });
    // Collected whole, and streamed under its length: both ways to the client.
    res.end(big ? 'x'.repeat(200_000) : 'ok');
  });
  for (const path of ['/custom/c', '/custom/c?big']) {
    const a = await call(`${d}${path}`);
    assert.equal(a.status, 200);
    assert.deepEqual([a.headers['set-cookie']].flat(), ['a=1; Path=/'], path);
  }
  custom.handle(undefined);
});

test('status and headers of the upstream come back as they are', async () => {
  custom.handle((req, res) => {
    const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
    res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/; HttpOnly']);
    res.setHeader('x-service', 'custom');
    if (status === 201) res.setHeader('location', '/custom/things/9');
    const body = status === 500 ? 'service exploded' : JSON.stringify({ from: 'service', status });
    res.writeHead(status, { 'content-type': status === 500 ? 'text/plain' : 'application/json' });
    res.end(body);
  });
  const ok = await call(`${d}/custom/x`);
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/; HttpOnly'], 'two Set-Cookie stay two headers');
  assert.equal(ok.headers['x-service'], 'custom');
  const created = await call(`${d}/custom/x?status=201`, { method: 'POST', body: { n: 1 } });
  assert.equal(created.status, 201);
  assert.equal(created.headers.location, '/custom/things/9');
  assert.deepEqual(created.json, { from: 'service', status: 201 });
  const missing = await call(`${d}/custom/x?status=404`);
  assert.equal(missing.status, 404);
  assert.equal(missing.headers['content-type'], 'application/json', 'the service\'s 404 is not turned into a gateway problem');
  assert.deepEqual(missing.json, { from: 'service', status: 404 });
  const broken = await call(`${d}/custom/x?status=500`);
  assert.equal(broken.status, 500);
  assert.equal(broken.text, 'service exploded');
  assert.equal(broken.headers['content-type'], 'text/plain');
  const teapot = await call(`${d}/custom/x?status=418`);
  assert.equal(teapot.status, 418);
  const raw = await rawRequest(dataPort, `GET /custom/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const dates = raw.headerLines.filter((l) => /^date:/i.test(l));
  assert.ok(dates.length <= 1, `Date is a single field, not one from the service and one from the gateway:\n${raw.head}`);
  const cookies = raw.headerLines.filter((l) => /^set-cookie:/i.test(l));
  assert.equal(cookies.length, 2, raw.head);
  custom.handle(undefined);
});

test('HEAD is relayed without a body, announcing the length the service announced', async () => {
  const body = JSON.stringify({ fixed: 'x'.repeat(300) });
  custom.handle((_req, res) => {
    // node:http leaves the body out of a HEAD answer and keeps the headers.
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), etag: '"h1"' });
    res.end(body);
  });
  const get = await call(`${d}/custom/head`);
  assert.equal(get.headers['content-length'], String(Buffer.byteLength(body)));
  const r = await rawRequest(dataPort, `HEAD /custom/head HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  assert.equal(r.status, 200, r.head);
  assert.equal(r.body, '');
  assert.equal(custom.last().method, 'HEAD');
  assert.ok(r.headerLines.includes('etag: "h1"'), r.head);
  const length = r.headerLines.find((l) => /^content-length:/i.test(l));
  if (length !== undefined) {
    assert.equal(length.slice(length.indexOf(':') + 1).trim(), String(Buffer.byteLength(body)),
      `HEAD announces the service's length or none, never another (RFC 9110 9.3.2):\n${r.head}`);
  }
  custom.handle(undefined);
});

test('204 and 304 answers are relayed without a body', async () => {
  custom.handle((req, res) => {
    if (req.method === 'DELETE') res.writeHead(204, { 'x-deleted': 'yes' });
    else res.writeHead(304, { etag: '"v1"' });
    res.end();
  });
  const deleted = await rawRequest(dataPort, `DELETE /custom/thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  assert.equal(deleted.status, 204, deleted.head);
  assert.ok(deleted.headerLines.includes('x-deleted: yes'), deleted.head);
  assert.equal(deleted.body, '');
  // A 204 announces no length at all (RFC 9110 8.6), not even 0.
  assert.ok(!deleted.headerLines.some((l) => /^(transfer-encoding|content-length):/i.test(l)), deleted.head);
  const notModified = await rawRequest(dataPort, `GET /custom/thing HTTP/1.1\r\nHost: x\r\nIf-None-Match: "v1"\r\nConnection: close\r\n\r\n`);
  assert.equal(notModified.status, 304, notModified.head);
  assert.ok(notModified.headerLines.includes('etag: "v1"'), notModified.head);
  assert.equal(notModified.body, '');
  assert.ok(!notModified.headerLines.some((l) => /^(transfer-encoding|content-length):/i.test(l)), notModified.head);
  assert.equal(custom.last().headers['if-none-match'], '"v1"');
  const viaClient = await call(`${d}/custom/thing`, { method: 'DELETE' });
  assert.equal(viaClient.status, 204);
  assert.equal((await call(`${d}/orders/after-204`)).status, 200, 'the connection stays usable');
  custom.handle(undefined);
});

test('a small JSON body arrives whole, with its Content-Length', async () => {
  const body = { name: 'widget', tags: ['a', 'é'], n: 42 };
  const text = JSON.stringify(body);
  const seen = echoed(await call(`${d}/orders/new`, { method: 'POST', body }));
  assert.equal(seen.body, text);
  assert.equal(seen.bodyLength, Buffer.byteLength(text));
  assert.equal(seen.headers['content-length'], String(Buffer.byteLength(text)));
  assert.equal(seen.headers['transfer-encoding'], undefined);
  assert.equal(seen.headers['content-type'], 'application/json');
  const empty = echoed(await call(`${d}/orders/empty`, { method: 'POST', raw: '' }));
  assert.equal(empty.bodyLength, 0);
});

const BIG = 20 * 1024 * 1024 + 12_345;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { writeSync, rmSync } = require('node:fs');
const { createRequire } = require('node:module');
const { beat, limitMs, what, databaseUrl, dataDir, root } = workerData;
let last = Atomics.load(beat, 0);
let since = Date.now();
const timer = setInterval(async () => {
  const now = Atomics.load(beat, 0);
  if (now !== last) { last = now; since = Date.now(); return; }
  if (Date.now() - since < limitMs) return;
  clearInterval(timer);
  writeSync(2, '\\n# WATCHDOG: the event loop of this test process, which runs the gateway, made no progress for '
    + limitMs + ' ms during: ' + what + '. The process is ended; the test failed.\\n');
  try {
    const name = databaseUrl ? new URL(databaseUrl).pathname.slice(1) : '';
    if (/^mk_test_[0-9a-f]+$/.test(name)) {
      const pg = createRequire(root + 'package.json')('pg');
      const client = new pg.Client({ connectionString: process.env.MEERKAT_TEST_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres' });
      await Promise.race([
        client.connect().then(() => client.query('drop database if exists ' + name + ' with (force)')).then(() => client.end()),
        new Promise((resolve) => setTimeout(resolve, 5000)),
      ]);
    }
    rmSync(dataDir, { recursive: true, force: true });
  } catch {}
  process.kill(process.pid, 'SIGKILL');
}, 200);
`;

/**
 * The gateway runs in this process: an answer that kept it spinning without ever yielding would
 * freeze the test runner with it, and no timer here could fire. A watchdog thread turns such a
 * freeze into a quick failure that says what happened, dropping the test database first.
 */
function guardEventLoop(what: string, limitMs: number): () => void {
  const beat = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WATCHDOG, {
    eval: true,
    workerData: { beat, limitMs, what, databaseUrl: t.db.databaseUrl ?? null, dataDir: t.db.dataDir, root: ROOT },
  });
  worker.unref();
  const timer = setInterval(() => Atomics.add(beat, 0, 1), 100);
  return () => {
    clearInterval(timer);
    void worker.terminate();
  };
}

test('a 20 MB upload with a declared length streams to the upstream intact', async () => {
  const expected = patternSha256(BIG);
  const res = await request(`${d}/orders/upload`, {
    method: 'PUT',
    headers: { 'content-type': 'application/octet-stream', 'content-length': String(BIG) },
    body: Readable.from(pattern(BIG)),
  });
  const seen = (await res.body.json()) as { bodyLength: number; bodySha256: string; headers: Record<string, string> };
  assert.equal(res.statusCode, 200);
  assert.equal(seen.bodyLength, BIG);
  assert.equal(seen.bodySha256, expected);
  assert.equal(seen.headers['content-length'], String(BIG));
});

test('a chunked request body is answered 411 at the plain door and its connection closed, unread: its parser misreads chunk sizes', async () => {
  const seen = up.requests.length;
  // A chunk extension uWebSockets.js reads as hex digits (0x1BADB): the request after it would be
  // read as this one's body and sent to the service, its token included.
  const smuggler = `POST /orders/store HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b\r\nX\r\n0\r\n\r\n`;
  const victim = `GET /private/victim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
  for (const together of [false, true]) {
    const { answered, cut } = await new Promise<{ answered: string; cut: boolean }>((resolve) => {
      const sock = connect(dataPort, '127.0.0.1', () => {
        // In one write, the victim is in the same read as the head; apart, it comes after the answer.
        if (together) sock.write(smuggler + victim);
        else {
          sock.write(smuggler);
          setTimeout(() => { if (!sock.destroyed) sock.write(victim); }, 100);
        }
      });
      let text = '';
      // Still open after 3 s: the door waited for a body that was never going to end.
      const timer = setTimeout(() => { sock.destroy(); resolve({ answered: text, cut: false }); }, 3000);
      sock.on('data', (b) => { text += b.toString('latin1'); });
      sock.on('error', () => undefined);
      sock.on('close', () => { clearTimeout(timer); resolve({ answered: text, cut: true }); });
    });
    assert.ok(cut, 'the door closed the connection itself');
    assert.match(answered, /^HTTP\/1\.1 411 /, answered);
    assert.match(answered, /"code":"body\.length-required"/);
    assert.match(answered, /\r\nconnection: close\r\n/i);
    assert.equal(answered.match(/HTTP\/1\.1 /g)?.length, 1, `one answer only, the victim never served (${together ? 'one write' : 'two writes'})`);
    assert.equal(up.requests.length, seen, 'nothing reached the service');
  }
  // Undici streams a body of unknown length chunked: refused the same way, with the answer.
  const streamed = await request(`${d}/orders/upload`, { method: 'POST', body: Readable.from(pattern(100_000, 10_000)) }).then(
    async (r) => ({ status: r.statusCode, text: await r.body.text() }),
    (err: Error) => ({ status: 0, text: err.message }),
  );
  assert.equal(streamed.status, 411, streamed.text);
  assert.equal(JSON.parse(streamed.text).code, 'body.length-required');
  assert.equal(up.requests.length, seen);
  assert.equal((await call(`${d}/orders/after-chunked`)).status, 200, 'the door goes on serving');
});

test('a caller that leaves mid-body is no error of the gateway: nothing at error level, no stack', async () => {
  const controlPort = Number(new URL(c).port);
  const before = t.logs.length;
  for (let i = 0; i < 5; i++) {
    const sock = connect(controlPort, '127.0.0.1');
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    sock.write(`POST /api/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"ro`);
    await new Promise((r) => setTimeout(r, 50));
    sock.destroy();
  }
  await new Promise((r) => setTimeout(r, 200));
  const said = t.logs.slice(before);
  assert.equal(said.filter((r) => r.msg === 'request failed' || r.level === 'error').length, 0, JSON.stringify(said.slice(0, 3)));
  assert.equal((await call(`${c}/readyz`)).status, 200);
});

test('an upstream that cannot be reached is a 502 with a sentence', async () => {
  const a = await call(`${d}/down/x`);
  assert.equal(a.status, 502);
  assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
  assert.equal(a.json.code, 'upstream.unreachable');
  assert.equal(typeof a.json.detail, 'string');
  assert.match(a.json.detail, /\S+ \S+ \S+/, 'a sentence a person reads');
  const post = await call(`${d}/down/x`, { method: 'POST', body: { a: 1 } });
  assert.equal(post.status, 502);
  assert.equal(post.json.code, 'upstream.unreachable');
  assert.equal((await call(`${d}/orders/after-502`)).status, 200, 'the gateway keeps serving');
});

/** Answers a service could send that read two ways: each must be refused, never relayed. */
const AMBIGUOUS: Record<string, string> = {
  'two-lengths': 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 50\r\n\r\nhello',
  'bare-lf': 'HTTP/1.1 200 OK\nx-smuggled: yes\r\ncontent-length: 2\r\n\r\nok',
  'folded': 'HTTP/1.1 200 OK\r\nx-a: 1\r\n x-b: 2\r\ncontent-length: 2\r\n\r\nok',
  'switch': 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n',
  // Transfer-Encoding is hop-by-hop: relayed without it, gzip bytes would reach the client unannounced.
  'gzip-chunked': 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n',
  'gzip': 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\nconnection: close\r\n\r\nok',
};

test('an answer that could be read two ways is a 502 with the fault named, never relayed', async () => {
  const server = createNetServer((socket) => {
    socket.once('data', (d) => {
      const name = /^GET \/broken\/([a-z-]+)/.exec(d.toString('latin1'))?.[1] ?? '';
      socket.end(AMBIGUOUS[name] ?? 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    await put('/api/routes/broken', { upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths: ['/broken'], rule: null });
    for (const [name, why] of [['two-lengths', /Content-Length is not one number/], ['bare-lf', /bare CR or LF/], ['folded', /folds a header line/], ['switch', /switched protocols/],
      ['gzip-chunked', /Transfer-Encoding holds gzip, a coding the gateway does not undo/], ['gzip', /Transfer-Encoding holds gzip/]] as const) {
      const a = await call(`${d}/broken/${name}`);
      assert.equal(a.status, 502, `${name}: ${a.text}`);
      assert.match(String(a.headers['content-type']), /^application\/problem\+json/);
      assert.equal(a.json.code, 'upstream.failed', name);
      assert.match(a.json.detail, why, name);
      assert.equal(a.headers['x-smuggled'], undefined);
    }
    assert.equal((await call(`${d}/orders/after-broken`)).status, 200, 'the gateway keeps serving');
  } finally {
    server.close();
  }
});

test('an upstream that never answers is a 504 after the route\'s timeout', async () => {
  const started = Date.now();
  const a = await call(`${d}/silent/x`);
  const elapsed = Date.now() - started;
  assert.equal(a.status, 504, a.text);
  assert.equal(a.json.code, 'upstream.timeout');
  assert.equal(typeof a.json.detail, 'string');
  assert.ok(elapsed >= 900, `answered after ${elapsed} ms, before the 1 s timeout`);
  assert.ok(elapsed < 5000, `answered after ${elapsed} ms`);
  assert.equal(silent.requests.length, 1, 'the request reached the silent service once');
  assert.equal((await call(`${d}/orders/after-504`)).status, 200, 'the gateway keeps serving');
});

test('malformed or odd requests to the data plane never answer 500', async () => {
  await put('/api/routes/rules', {
    upstream: up.origin, paths: ['/rules'], rule: null, endpointRules: [{ method: 'GET', path: '/rules/{id}/x', roles: ['staff'] }],
  });
  const urls = ['/orders/%zz', '/orders/%E0%A4%A', '/%', '/orders/%00', '/rules/%E0%A4%A/x', '/rules/%ff/x', '/orders/' + 'a'.repeat(3000), '/orders//x', '/orders/./../x'];
  const methods = ['GET', 'POST', 'PROPFIND', 'TRACE', 'PURGE', 'DELETE'];
  for (const u of urls) {
    for (const method of methods) {
      const a = await call(`${d}${u}`, { method });
      assert.ok(a.status < 500, `${method} ${u} -> ${a.status} ${a.text.slice(0, 200)}`);
    }
  }
  const headerCases: Array<Record<string, string>> = [
    { 'x-big': 'v'.repeat(3000) },
    { cookie: Array.from({ length: 200 }, (_, i) => `c${i}=${i}`).join('; ') + '; mk_session=x' },
    { authorization: `Bearer mk_${'x'.repeat(2000)}` },
    { authorization: 'Bearer' },
    { authorization: 'Bearer ' },
    { authorization: 'bearer mk_' },
    { authorization: 'Basic' },
    { host: 'a..b' },
  ];
  for (const headers of headerCases) {
    for (const path of ['/orders/h', '/private/h', '/nowhere']) {
      const a = await call(`${d}${path}`, { headers });
      assert.ok(a.status < 500, `${path} ${JSON.stringify(headers).slice(0, 80)} -> ${a.status} ${a.text.slice(0, 200)}`);
      if (a.status >= 400) assert.equal(typeof a.json?.code, 'string', `${path}: problem+json expected, got ${a.text.slice(0, 200)}`);
    }
  }
  const raws = [
    `POST /orders/expect HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi`,
    `POST /orders/cl HTTP/1.1\r\nHost: x\r\nConnection: close, Content-Length\r\nContent-Length: 3\r\n\r\nabc`,
    `get /orders/lower HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    `GET /orders/ HTTP/1.1\r\nHost: x\r\nX-Gateway-User: a\r\nX-Gateway-User: b\r\nConnection: close\r\n\r\n`,
    `GET /orders/%%%% HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    // Host values the client library refuses to send.
    ...['[::1', '[', ':', '[]:80', 'x:y:z', ''].map((host) => `GET /h/odd-host HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
    `GET /orders/conn HTTP/1.1\r\nHost: x\r\nConnection: , , ,close\r\n\r\n`,
    `GET /orders/conn HTTP/1.1\r\nHost: x\r\nConnection: close, host, x-forwarded-for, authorization, cookie\r\nCookie: a=1\r\n\r\n`,
    `GET /private/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer mk_a\r\nAuthorization: Bearer mk_b\r\nConnection: close\r\n\r\n`,
  ];
  for (const text of raws) {
    const r = await rawRequest(dataPort, text).catch((err: Error) => ({ status: 0, head: err.message, body: '', headerLines: [] }));
    assert.ok(r.status < 500, `${JSON.stringify(text.slice(0, 50))} -> ${r.head}`);
  }
  const cl = up.requests.find((r) => r.url === '/base/orders/cl');
  assert.ok(cl, 'the body framed by a Connection-listed Content-Length reached the upstream');
  assert.equal(cl.body, 'abc', 'a Connection-listed Content-Length still frames the body');
  assert.equal((await call(`${d}/orders/still-alive`)).status, 200);
  assert.equal(t.logs.filter((r) => r.msg === 'request failed').length, 0, 'no handler failed');
});

test('a 20 MB download streams back intact, with and without a declared length', async (tc) => {
  const expected = patternSha256(BIG);
  custom.handle(async (req, res) => {
    const declared = !(req.url ?? '').includes('chunked');
    res.writeHead(200, { 'content-type': 'application/octet-stream', ...(declared ? { 'content-length': String(BIG) } : {}) });
    await pipeline(Readable.from(pattern(BIG)), res);
  });
  // Runs last: a gateway stuck relaying this answer would stop the whole process (see guardEventLoop).
  const release = guardEventLoop('a 20 MB download through the data plane', 15_000);
  tc.after(release);
  for (const path of ['/custom/download', '/custom/download/chunked']) {
    const res = await request(`${d}${path}`);
    assert.equal(res.statusCode, 200);
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of res.body) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    assert.equal(size, BIG, path);
    assert.equal(hash.digest('hex'), expected, path);
    const length = res.headers['content-length'];
    if (length !== undefined) assert.equal(length, String(BIG), `${path}: a length, when announced, is the true one`);
  }
  release();
  custom.handle(undefined);
});
