/**
 * The HTTPS doors of the data and internal planes through real clients (spec 1.2 rules 1-3, 9,
 * 10): node:tls and node:https, `openssl s_client` and `curl`. One gateway on the test clock for
 * the file; every test starts with nothing placed and removes what it added.
 */
import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import { X509Certificate, createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { signInAdmin, type Admin } from '../helpers/admin.ts';
import type { Answer } from '../helpers/http.ts';
import { advanceClock } from '../helpers/scheduler.ts';
import { openSslKit, type OpenSslKit } from '../helpers/openssl.ts';
import { closedPort, startUpstream, type Upstream, type UpstreamHandler } from '../helpers/upstream.ts';
import { mulberry32 } from '../helpers/random.ts';
import { curlResolve, handshake, headerLine, httpsCall, plainCall, sClient, tcpProbe, type HandshakeResult } from '../helpers/tls-client.ts';

let t: TestGateway;
let root: Admin;
let kit: OpenSslKit;
let ca: string;
let up: Upstream;
/** The data plane's configured HTTPS port: a fixed one, so "nothing listens there" can be asked. */
let tlsPort: number;
/** Where a file-system certificate is "mounted" (outside the data directory). */
let mount: string;

before(async () => {
  tlsPort = await closedPort();
  t = await startTestGateway({ GATEWAY_CLOCK: 'manual', GATEWAY_INTERNAL_NAMES: 'meerkat-internal.test', GATEWAY_TLS_ADDR: `127.0.0.1:${tlsPort}` });
  mount = mkdtempSync(join(tmpdir(), 'meerkat-mount-'));
  root = await signInAdmin(t.url('control'));
  kit = openSslKit();
  ca = kit.authority().cert;
  up = await startUpstream();
});

after(async () => {
  await t?.close();
  await up?.close();
  kit?.remove();
  if (mount) rmSync(mount, { recursive: true, force: true });
});

/** Every certificate API answer of the file goes through here: none may carry key material. */
async function api(method: 'get' | 'post' | 'put' | 'del', path: string, body?: unknown): Promise<Answer> {
  const a = method === 'get' || method === 'del' ? await root[method](path) : await root[method](path, body);
  assert.doesNotMatch(a.text, /PRIVATE KEY/, `${method} ${path} answered key material`);
  return a;
}

async function addCert(body: Record<string, unknown>): Promise<{ id: string; fingerprint: string; name: string }> {
  const a = await api('post', '/api/certificates', body);
  assert.equal(a.status, 201, a.text);
  return a.json;
}

/** A leaf signed by the file's CA, imported. */
function importLeaf(file: string, san: string, days?: number): Promise<{ id: string; fingerprint: string; name: string }> {
  const leaf = kit.leaf(file, san, days === undefined ? {} : { days });
  return addCert({ source: 'import', name: file, cert: leaf.cert, key: leaf.key });
}

function place(id: string, planes: string[], replace?: boolean): Promise<Answer> {
  return api('put', `/api/certificates/${id}/placement`, { planes, ...(replace === undefined ? {} : { replace }) });
}

async function placeOk(id: string, planes: string[], replace?: boolean): Promise<void> {
  const a = await place(id, planes, replace);
  assert.equal(a.status, 200, a.text);
  // Placement order decides the fallback: the test clock moves so no two share a moment.
  await advanceClock(t.url('control'), 'PT1S');
}

function httpsPort(plane: 'data' | 'control' | 'internal'): number | undefined {
  return t.gw.doors.find((d) => d.plane === plane && d.protocol === 'https')?.port;
}

function dataPort(): number {
  const port = httpsPort('data');
  assert.equal(port, tlsPort, 'the data plane has an HTTPS door, on its configured port');
  return port;
}

function fingerprintOf(h: HandshakeResult): string {
  assert.ok(h.ok, h.ok ? '' : `handshake failed: ${h.error}`);
  return h.cert.fingerprint;
}

afterEach(async () => {
  const list = await api('get', '/api/certificates');
  for (const c of list.json.certificates as Array<{ id: string }>) {
    const d = await api('del', `/api/certificates/${c.id}`);
    assert.equal(d.status, 204, d.text);
  }
  assert.equal(httpsPort('data'), undefined, 'nothing placed: the data plane has no HTTPS door');
});

test('nothing placed: no HTTPS door listens, and a pending signing request cannot be placed', async () => {
  assert.deepEqual(t.gw.doors.filter((d) => d.protocol === 'https'), []);
  assert.equal(await tcpProbe(tlsPort), 'refused', 'nothing listens on the configured HTTPS address');
  const pending = await addCert({ source: 'csr', names: ['pending.example.test'] });
  const csr = await api('get', `/api/certificates/${pending.id}/csr`);
  assert.equal(csr.status, 200);
  assert.match(csr.text, /BEGIN CERTIFICATE REQUEST/);
  const refused = await place(pending.id, ['app']);
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'tls.not-servable');
  const after = await api('get', `/api/certificates/${pending.id}`);
  assert.equal(after.json.state, 'pending');
  assert.deepEqual(after.json.planes, []);
  assert.deepEqual(t.gw.doors.filter((d) => d.protocol === 'https'), [], 'the refusal left no door open');
  assert.equal(await tcpProbe(tlsPort), 'refused');
});

test('a certificate placed on app opens the HTTPS door; /healthz answers through it, verified by the CA', async () => {
  const app = await importLeaf('app', 'DNS:app.example.test');
  const placed = await place(app.id, ['app']);
  assert.equal(placed.status, 200, placed.text);
  assert.deepEqual(placed.json.planes, ['app']);
  assert.equal(placed.json.state, 'active');
  const port = dataPort();
  const a = await httpsCall(port, { path: '/healthz', servername: 'app.example.test', ca });
  assert.equal(a.status, 200, a.body);
  assert.equal(a.presented?.authorized, true, a.presented?.authorizationError);
  assert.equal(a.presented?.fingerprint, app.fingerprint);
  // A name the certificate does not carry fails verification with the right authority.
  await assert.rejects(httpsCall(port, { path: '/healthz', servername: 'other.example.test', ca }), /altnames|does not match/i);
  // Every answer of the certificate API goes through api(), which refuses key material; these read it all.
  const list = await api('get', '/api/certificates');
  assert.deepEqual(list.json.certificates.map((c: { id: string }) => c.id), [app.id]);
  assert.equal((await api('get', `/api/certificates/${app.id}`)).json.fingerprint, app.fingerprint);
});

test('a self-signed certificate serves the door too', async () => {
  const self = await addCert({ source: 'self-signed', names: ['self.example.test'] });
  await placeOk(self.id, ['app']);
  const s = await httpsCall(dataPort(), { path: '/healthz', servername: 'self.example.test' });
  assert.equal(s.status, 200);
  assert.equal(s.presented?.fingerprint, self.fingerprint);
  assert.deepEqual(s.presented?.names, ['self.example.test']);
  assert.equal(s.presented?.authorizationError, 'DEPTH_ZERO_SELF_SIGNED_CERT');
});

/**
 * A request written by hand through TLS (the CA's or a self-signed certificate: not verified), the
 * whole answer as text. Written, not ended: an answer that comes after the service's would find
 * the connection half closed; the request says Connection: close and the server closes.
 */
function rawTls(port: number, servername: string, text: string): Promise<string> {
  return tlsSession(port, servername, text, () => undefined);
}

test('the HTTPS door reads repeated header lines as the plain door does: two Host lines are refused', async () => {
  const self = await addCert({ source: 'self-signed', names: ['twohosts.example.test'] });
  await placeOk(self.id, ['app']);
  const raw = (text: string) => rawTls(dataPort(), 'twohosts.example.test', text);
  const two = await raw('GET /nowhere HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nConnection: close\r\n\r\n');
  assert.match(two, /^HTTP\/1\.1 400 /, two.slice(0, 200));
  assert.match(two, /"code":"request\.invalid"/);
  const one = await raw('GET /nowhere HTTP/1.1\r\nHost: a.example\r\nConnection: close\r\n\r\n');
  assert.match(one, /^HTTP\/1\.1 404 /, one.slice(0, 200));
  await placeOk(self.id, []);
});

test('certificates of both key types on one plane: each name still gets its own', async () => {
  // The CA's leaves are EC (P-256), the gateway's self-signed certificates RSA. The oldest placed
  // is the door's default context; the handshake's choice must not fall back to it by key type
  // (node's SNICallback installs the chosen certificate beside the default context's, in the slot
  // of its key type, and OpenSSL may then pick the default's: nodejs/node#54235).
  const ec = await importLeaf('ec', 'DNS:ec.example.test');
  const rsa = await addCert({ source: 'self-signed', names: ['rsa.example.test'] });
  await placeOk(ec.id, ['app']);
  await placeOk(rsa.id, ['app']);
  const port = dataPort();
  assert.equal(fingerprintOf(await handshake(port, {})), ec.fingerprint, 'no server name: the oldest placed');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'ec.example.test' })), ec.fingerprint);
  assert.equal(fingerprintOf(await handshake(port, { servername: 'rsa.example.test' })), rsa.fingerprint, 'the RSA certificate carrying the name, not the EC fallback');
  const s = await sClient(port, { servername: 'rsa.example.test' });
  assert.equal(s.fingerprint, rsa.fingerprint, 'openssl s_client sees the same');
});

test('SNI choice: each name its own, no name or an unknown one the oldest placed, a wildcard its names', async () => {
  const one = await importLeaf('one', 'DNS:one.sni.test');
  const two = await importLeaf('two', 'DNS:two.sni.test');
  const wild = await importLeaf('wild', 'DNS:*.wild.test');
  await placeOk(one.id, ['app']);
  await placeOk(two.id, ['app']);
  await placeOk(wild.id, ['app']);
  const port = dataPort();
  assert.equal(fingerprintOf(await handshake(port, { servername: 'one.sni.test', ca })), one.fingerprint);
  assert.equal(fingerprintOf(await handshake(port, { servername: 'two.sni.test', ca })), two.fingerprint);
  assert.equal(fingerprintOf(await handshake(port, { servername: 'a.wild.test', ca })), wild.fingerprint);
  const verified = await handshake(port, { servername: 'a.wild.test', ca });
  assert.ok(verified.ok && verified.cert.authorized, 'the wildcard verifies for a.wild.test');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'a.b.wild.test' })), one.fingerprint, 'a wildcard covers one label only');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'nobody.sni.test' })), one.fingerprint);
  assert.equal(fingerprintOf(await handshake(port, {})), one.fingerprint, 'no server name: the oldest placed');
  const noName = await sClient(port, {});
  assert.equal(noName.fingerprint, one.fingerprint, noName.stderr);
  assert.match(noName.subject, /CN ?= ?one/);
  const named = await sClient(port, { servername: 'two.sni.test', ca });
  assert.equal(named.fingerprint, two.fingerprint, named.stderr);
  assert.equal(named.verify, 0, named.stdout);
  // Removing the oldest makes the next one the fallback.
  await placeOk(one.id, []);
  assert.equal(fingerprintOf(await handshake(port, {})), two.fingerprint);
});

test('a renewal on disk carrying a name another placed certificate answers is held back: handshakes keep their certificates', async () => {
  // Placement refuses a second certificate for a name, and a file-system pair renewed on disk with
  // more names is judged by the same rule (which of two would win is tls-choose.test.ts's).
  const held = await importLeaf('held', 'DNS:both.sni.test', 10);
  await placeOk(held.id, ['app']);
  const onDisk = (san: string, days: number): string => {
    const leaf = kit.leaf('disk', san, { days });
    writeFileSync(join(mount, 'tls.crt'), leaf.cert);
    writeFileSync(join(mount, 'tls.key'), leaf.key);
    return new X509Certificate(leaf.cert).fingerprint256;
  };
  const first = onDisk('DNS:disk.sni.test', 10);
  const file = await addCert({ source: 'file', certPath: join(mount, 'tls.crt'), keyPath: join(mount, 'tls.key') });
  await placeOk(file.id, ['app']);
  const port = dataPort();
  const reread = async (ok: (record: { fingerprint: string; detail: string | null }) => boolean, what: string): Promise<void> => {
    await advanceClock(t.url('control'), 'PT30S');
    // The re-read runs on the actor's thread once the clock moved; its publish follows shortly.
    for (let i = 0; i < 100; i++) {
      if (ok((await api('get', `/api/certificates/${file.id}`)).json)) return;
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    assert.fail(what);
  };
  const longer = onDisk('DNS:disk.sni.test,DNS:both.sni.test', 20);
  await reread((r) => /placement rule/.test(String(r.detail)), 'the renewal was not held back');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'both.sni.test' })), held.fingerprint, 'the name stays its certificate\'s');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'disk.sni.test' })), first, 'the last pair read');
  // The other certificate leaves the plane: the next read takes the renewal.
  await placeOk(held.id, []);
  await reread((r) => r.fingerprint === longer, 'the renewal was not taken');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'both.sni.test' })), longer);
  assert.equal(fingerprintOf(await handshake(port, { servername: 'disk.sni.test' })), longer);
});

test('placement refusals: a name answered already (409, replace takes its place), the internal plane\'s names', async () => {
  const first = await importLeaf('first', 'DNS:taken.example.test');
  const second = await importLeaf('second', 'DNS:extra.example.test,DNS:taken.example.test');
  await placeOk(first.id, ['app']);
  const refused = await place(second.id, ['app']);
  assert.equal(refused.status, 409, refused.text);
  assert.equal(refused.json.code, 'tls.name-taken');
  assert.equal(refused.json.certificate, first.id);
  assert.equal(refused.json.name, 'taken.example.test');
  assert.match(refused.json.detail, /"first"/);
  assert.match(refused.json.detail, /taken\.example\.test/);
  assert.deepEqual((await api('get', `/api/certificates/${second.id}`)).json.planes, [], 'nothing changed');
  const port = dataPort();
  assert.equal(fingerprintOf(await handshake(port, { servername: 'taken.example.test' })), first.fingerprint);

  const replaced = await place(second.id, ['app'], true);
  assert.equal(replaced.status, 200, replaced.text);
  assert.deepEqual(replaced.json.planes, ['app']);
  const kept = await api('get', `/api/certificates/${first.id}`);
  assert.equal(kept.status, 200, 'the replaced certificate is kept');
  assert.deepEqual(kept.json.planes, [], 'and listed as placed nowhere');
  assert.equal(fingerprintOf(await handshake(port, { servername: 'taken.example.test' })), second.fingerprint);

  const outsider = await addCert({ source: 'self-signed', names: ['outside.example.test'] });
  const notInternal = await place(outsider.id, ['internal']);
  assert.equal(notInternal.status, 400, notInternal.text);
  assert.equal(notInternal.json.code, 'tls.internal-name');
  assert.match(notInternal.json.detail, /meerkat-internal\.test/);
  assert.equal(httpsPort('internal'), undefined);
  const internal = await addCert({ source: 'self-signed', names: ['meerkat-internal.test'] });
  await placeOk(internal.id, ['internal']);
  const internalPort = httpsPort('internal');
  assert.ok(internalPort !== undefined, 'the internal plane\'s HTTPS door opened');
  const h = await handshake(internalPort, { servername: 'meerkat-internal.test' });
  assert.equal(fingerprintOf(h), internal.fingerprint);
  const probe = await httpsCall(internalPort, { path: '/healthz', servername: 'meerkat-internal.test' });
  assert.equal(probe.status, 200);
});

test('replacing a certificate keeps open connections on theirs; new handshakes get the new one', async () => {
  const old = await importLeaf('swap-old', 'DNS:swap.example.test');
  await placeOk(old.id, ['app']);
  const port = dataPort();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const call = () => httpsCall(port, { path: '/healthz', servername: 'swap.example.test', ca, agent });
    const before = await call();
    assert.equal(before.status, 200);
    assert.equal(before.presented?.fingerprint, old.fingerprint);
    const fresh = await importLeaf('swap-new', 'DNS:swap.example.test');
    const swapped = await place(fresh.id, ['app'], true);
    assert.equal(swapped.status, 200, swapped.text);
    assert.equal(dataPort(), port, 'the listener did not move');
    const again = await call();
    assert.equal(again.status, 200, 'the open connection was not dropped');
    assert.equal(again.localPort, before.localPort, 'the same connection carried it');
    assert.equal(again.presented?.fingerprint, old.fingerprint, 'an open connection keeps its certificate');
    const next = await handshake(port, { servername: 'swap.example.test', ca });
    assert.equal(fingerprintOf(next), fresh.fingerprint);
    assert.ok(next.ok && next.cert.authorized);
  } finally {
    agent.destroy();
  }
});

test('removing the last certificate closes the door; placing one again reopens it', async () => {
  const only = await importLeaf('only', 'DNS:only.example.test');
  await placeOk(only.id, ['app']);
  const port = dataPort();
  assert.equal(await tcpProbe(port), 'open');
  const removed = await api('del', `/api/certificates/${only.id}`);
  assert.equal(removed.status, 204, removed.text);
  assert.equal(httpsPort('data'), undefined);
  assert.equal(await tcpProbe(port), 'refused', 'the door closed');
  const back = await importLeaf('back', 'DNS:only.example.test');
  await placeOk(back.id, ['app']);
  assert.equal(dataPort(), port);
  const a = await httpsCall(port, { path: '/healthz', servername: 'only.example.test', ca });
  assert.equal(a.status, 200);
  assert.equal(a.presented?.fingerprint, back.fingerprint);
  // Leaving the plane by placement closes it too.
  await placeOk(back.id, []);
  assert.equal(await tcpProbe(port), 'refused');
});

test('curl --resolve verifies the door with the CA; openssl s_client -servername shows the subject asked', async () => {
  const app = await importLeaf('app.example.test', 'DNS:app.example.test');
  const other = await importLeaf('other.example.test', 'DNS:other.example.test');
  await placeOk(other.id, ['app']);
  await placeOk(app.id, ['app']);
  const port = dataPort();
  const curl = await curlResolve('app.example.test', port, '/healthz', ca);
  assert.equal(curl.code, 0, curl.stderr);
  assert.equal(curl.status, 200, curl.body);
  const s = await sClient(port, { servername: 'app.example.test', ca });
  assert.equal(s.subject.replace(/\s/g, ''), 'CN=app.example.test', s.stdout);
  assert.equal(s.verify, 0, s.stdout);
  assert.equal(s.fingerprint, app.fingerprint);
  const wrong = await curlResolve('nobody.example.test', port, '/healthz', ca);
  assert.notEqual(wrong.code, 0, 'a name no certificate carries gets the fallback, which does not verify for it');
});

/**
 * A route `/<name>` to the file's upstream answering with `handler`, and a certificate for
 * `<name>.example.test` placed on the data plane: `run` gets the HTTPS door's port. Both go after.
 */
async function onHttpsRoute(name: string, handler: UpstreamHandler, run: (port: number) => Promise<void>): Promise<void> {
  up.handle(handler);
  try {
    const route = await api('put', `/api/routes/tls-${name}`, { upstream: up.origin, paths: [`/${name}`], rule: null });
    assert.ok(route.status === 200 || route.status === 201, route.text);
    const cert = await importLeaf(name, `DNS:${name}.example.test`);
    await placeOk(cert.id, ['app']);
    await run(dataPort());
  } finally {
    up.handle(undefined);
    await api('del', `/api/routes/tls-${name}`);
  }
}

test('a target in absolute form on the HTTPS door: its authority is the host, its path is routed, user information is refused', async () => {
  await onHttpsRoute('absolute', (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, host: req.headers.host })); }, async (port) => {
    const raw = (text: string) => rawTls(port, 'absolute.example.test', text);
    const routed = await raw('GET https://absolute.example.test/absolute/x?q=1 HTTP/1.1\r\nHost: ignored.example\r\nConnection: close\r\n\r\n');
    assert.match(routed, /^HTTP\/1\.1 200 /, routed.slice(0, 300));
    assert.match(routed, /"url":"\/absolute\/x\?q=1"/);
    const credentials = await raw('GET http://user:pw@absolute.example.test/absolute/x HTTP/1.1\r\nHost: absolute.example.test\r\nConnection: close\r\n\r\n');
    assert.match(credentials, /^HTTP\/1\.1 400 /, credentials.slice(0, 300));
    assert.match(credentials, /"code":"request\.invalid"/);
  });
});

test('the gateway\'s Via entry names the version the request came in: 1.0 or 1.1 through the HTTPS door', async () => {
  await onHttpsRoute('via', (req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ via: req.headers.via, version: req.httpVersion })); }, async (port) => {
    const raw = (text: string) => rawTls(port, 'via.example.test', text);
    const old = await raw('GET /via/x HTTP/1.0\r\nHost: via.example.test\r\nVia: 1.0 front-proxy\r\n\r\n');
    assert.match(old, /^HTTP\/1\.[01] 200 /, old.slice(0, 300));
    // The caller's entry first, then the gateway's, which names HTTP/1.0; the call itself goes out in HTTP/1.1.
    assert.match(old, /"via":"1\.0 front-proxy, 1\.0 meerkat-[0-9a-f]{8}","version":"1\.1"/, old);
    const now = await raw('GET /via/x HTTP/1.1\r\nHost: via.example.test\r\nConnection: close\r\n\r\n');
    assert.match(now, /"via":"1\.1 meerkat-[0-9a-f]{8}"/, now);
  });
});

test('HTTP/1.0 clients on the HTTPS door: closed after the answer unless they ask to keep the connection, no Host needed, no chunks, no 100 Continue', async () => {
  const old: UpstreamHandler = (req, res, received) => {
    if (req.url === '/old/stream') {
      // No length: the gateway relays it in chunks to an HTTP/1.1 client, to the end of the connection to an HTTP/1.0 one.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('ab');
      setTimeout(() => res.end('cd'), 10);
      return;
    }
    const text = JSON.stringify({ url: req.url, body: received.body });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  };
  await onHttpsRoute('old', old, async (port) => {
    const name = 'old.example.test';
    // Without keep-alive: one answer, with its length, and the connection ends.
    const once = answersIn(await rawTls(port, name, `GET /old/once HTTP/1.0\r\nHost: ${name}\r\n\r\n`));
    assert.deepEqual(once.map((a) => [a.status, JSON.parse(a.body).url]), [[200, '/old/once']]);
    assert.match(once[0]!.head, /\r\nConnection: close(\r\n|$)/i);
    assert.match(once[0]!.head, /\r\ncontent-length: \d+(\r\n|$)/i);
    // Keep-alive asked: the connection carries the next request (one without Host), until one does not ask.
    const steps = [`GET /old/second HTTP/1.0\r\nConnection: keep-alive\r\n\r\n`, `POST /old/third HTTP/1.0\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello`];
    let sent = 0;
    const kept = answersIn(await tlsSession(port, name, `GET /old/first HTTP/1.0\r\nHost: ${name}\r\nConnection: keep-alive\r\n\r\n`, (got, write) => {
      // Each step once the answers before it came whole.
      let whole = 0;
      for (let rest = got, a = answerAt(rest); a !== null; rest = rest.slice(a.size), a = answerAt(rest)) whole++;
      if (whole > sent && sent < steps.length) write(steps[sent++]!);
    }));
    assert.deepEqual(kept.map((a) => [a.status, JSON.parse(a.body).url, JSON.parse(a.body).body]), [[200, '/old/first', ''], [200, '/old/second', ''], [200, '/old/third', 'hello']]);
    assert.deepEqual(kept.map((a) => /\r\nConnection: (\S+)/i.exec(a.head)?.[1]), ['keep-alive', 'keep-alive', 'close']);
    assert.ok(!kept.some((a) => /^HTTP\/1\.1 100/.test(a.head)), 'no 100 Continue to an HTTP/1.0 client');
    // An answer of no stated length: no chunks, its end is the connection's, whatever the client asked.
    const streamed = await rawTls(port, name, `GET /old/stream HTTP/1.0\r\nHost: ${name}\r\nConnection: keep-alive\r\n\r\n`);
    const end = streamed.indexOf('\r\n\r\n');
    const streamedHead = streamed.slice(0, end);
    assert.match(streamedHead, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(streamedHead, /transfer-encoding|content-length/i);
    assert.match(streamedHead, /\r\nConnection: close(\r\n|$)/i);
    assert.equal(streamed.slice(end + 4), 'abcd');
    // The same answer to an HTTP/1.1 client comes in chunks on a connection that stays.
    const chunked = await rawTls(port, name, `GET /old/stream HTTP/1.1\r\nHost: ${name}\r\nConnection: close\r\n\r\n`);
    assert.match(chunked, /\r\nTransfer-Encoding: chunked\r\n/i);
    assert.equal(answerAt(chunked)?.body, 'abcd');
    // curl --http1.0 offers the protocol in ALPN as "http/1.0" alone: the handshake agrees to it.
    const curl = await curlResolve(name, port, '/old/curl', ca, ['--http1.0']);
    assert.equal(curl.status, 200, curl.stderr);
    assert.equal(JSON.parse(curl.body).url, '/old/curl');
    const alpn = (offered: string[]) => new Promise<string | false>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: name, rejectUnauthorized: false, ALPNProtocols: offered }, () => {
        resolve(socket.alpnProtocol ?? false);
        socket.end();
      });
      socket.on('error', reject);
    });
    assert.equal(await alpn(['http/1.0']), 'http/1.0');
    assert.equal(await alpn(['h2', 'http/1.1', 'http/1.0']), 'http/1.1', 'HTTP/1.1 first when both are offered');
  });
});

test('HEAD and 204 answers through the HTTPS door match the plain door', async () => {
  const body = JSON.stringify({ fixed: 'x'.repeat(300) });
  await onHttpsRoute('rules', (req, res) => {
    if (req.method === 'DELETE') res.writeHead(204, { 'x-deleted': 'yes' }).end();
    else res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  }, async (port) => {
    const plain = Number(new URL(t.url('data')).port);
    for (const [method, path] of [['HEAD', '/rules/doc'], ['DELETE', '/rules/doc'], ['GET', '/rules/doc'], ['HEAD', '/healthz']] as const) {
      const p = await plainCall(plain, { method, path, host: 'rules.example.test' });
      const s = await httpsCall(port, { method, path, servername: 'rules.example.test', ca });
      assert.equal(s.status, p.status, `${method} ${path}`);
      assert.equal(headerLine(s, 'content-length'), headerLine(p, 'content-length'), `${method} ${path}: content-length\n${s.headerLines.join('\n')}\n--\n${p.headerLines.join('\n')}`);
      assert.equal(headerLine(s, 'transfer-encoding'), headerLine(p, 'transfer-encoding'), `${method} ${path}: transfer-encoding`);
      assert.equal(s.body, p.body, `${method} ${path}: body`);
    }
    const head = await httpsCall(port, { method: 'HEAD', path: '/rules/doc', servername: 'rules.example.test', ca });
    assert.equal(head.status, 200);
    assert.equal(headerLine(head, 'content-length'), String(Buffer.byteLength(body)));
    assert.equal(head.body, '');
    const deleted = await httpsCall(port, { method: 'DELETE', path: '/rules/doc', servername: 'rules.example.test', ca });
    assert.equal(deleted.status, 204);
    assert.equal(headerLine(deleted, 'x-deleted'), 'yes');
    assert.equal(headerLine(deleted, 'content-length'), undefined, 'a 204 announces no length');
  });
});

test('long answers through the HTTPS door reach a client that reads slowly whole, stated or chunked', async () => {
  // The relay hands the door views of a read buffer it reuses (Exchange.write): the door must not
  // let Node's response hold one past the write.
  const rnd = mulberry32(7);
  const body = Buffer.alloc(2 * 1024 * 1024);
  for (let i = 0; i < body.length; i++) body[i] = Math.floor(rnd() * 256);
  const digest = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
  await onHttpsRoute('long', (req, res) => {
    res.writeHead(200, req.url!.endsWith('/stated') ? { 'content-length': String(body.length) } : {});
    // In pieces of several sizes, so that reads and writes do not line up.
    let at = 0;
    const more = (): void => {
      while (at < body.length) {
        const n = [1000, 70_000, 16_384, 5][at % 4]!;
        const ok = res.write(body.subarray(at, at + n));
        at += n;
        if (!ok) { res.once('drain', more); return; }
      }
      res.end();
    };
    more();
  }, async (port) => {
    for (const framing of ['stated', 'chunked']) {
      const got = await new Promise<{ sha: string; length: number }>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: `/long/${framing}`, servername: 'long.example.test', ca, agent: false }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (d: Buffer) => {
            parts.push(d);
            // Reads a little, then stops for a moment: the door's socket fills and the relay must wait.
            res.pause();
            setImmediate(() => res.resume());
          });
          res.on('end', () => { const all = Buffer.concat(parts); resolve({ sha: digest(all), length: all.length }); });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(got.length, body.length, `${framing}: every byte`);
      assert.equal(got.sha, digest(body), `${framing}: the bytes unchanged`);
    }
  });
});

/**
 * The first answer at the start of `text`: its status, head and body (stated or chunked; none for
 * `bodiless`), and the length it took; null while it is not complete.
 */
function answerAt(text: string, bodiless = false): { status: number; head: string; body: string; size: number } | null {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = text.slice(0, end);
  const status = Number(head.slice(9, 12));
  let at = end + 4;
  if (bodiless) return { status, head, body: '', size: at };
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) {
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    return text.length < at + length ? null : { status, head, body: text.slice(at, at + length), size: at + length };
  }
  let body = '';
  for (;;) {
    const eol = text.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(text.slice(at, eol), 16);
    if (size === 0) return text.length < eol + 4 ? null : { status, head, body, size: eol + 4 };
    if (text.length < eol + 2 + size + 2) return null;
    body += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** Every answer in `text`, one after another. */
function answersIn(text: string): Array<{ status: number; head: string; body: string }> {
  const out: Array<{ status: number; head: string; body: string }> = [];
  let rest = text;
  while (rest.length > 0) {
    const a = answerAt(rest);
    assert.ok(a, `an answer is cut: ${JSON.stringify(rest.slice(0, 200))}`);
    out.push(a);
    rest = rest.slice(a.size);
  }
  return out;
}

/** The service's echo: what it was asked, as JSON. */
const echoCall: UpstreamHandler = (req, res, received) => {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, url: req.url, body: received.body }));
};

test('one HTTPS connection carries plain requests and others in order: the door reads the plain ones, node:http every one from the first other', async () => {
  await onHttpsRoute('mix', echoCall, async (port) => {
    const host = 'Host: mix.example.test\r\n';
    // Pipelined in one write: a plain GET, a POST with a stated length, a PUT in chunks (with an
    // extension and a trailer), a target in absolute form (node:http takes the connection there),
    // then a GET node:http reads too.
    const text = await rawTls(port, 'mix.example.test',
      `GET /mix/1?a=b HTTP/1.1\r\n${host}\r\n` +
      `POST /mix/2 HTTP/1.1\r\n${host}Content-Length: 5\r\n\r\nhello` +
      `PUT /mix/3 HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n4;x=y\r\nbyte\r\n1\r\ns\r\n0\r\nx-sum: 1\r\n\r\n` +
      `GET https://mix.example.test/mix/4 HTTP/1.1\r\n${host}\r\n` +
      `GET /mix/5 HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    const answers = answersIn(text);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200], text);
    assert.deepEqual(answers.map((a) => JSON.parse(a.body)), [
      { method: 'GET', url: '/mix/1?a=b', body: '' },
      { method: 'POST', url: '/mix/2', body: 'hello' },
      { method: 'PUT', url: '/mix/3', body: 'bytes' },
      { method: 'GET', url: '/mix/4', body: '' },
      { method: 'GET', url: '/mix/5', body: '' },
    ]);
    // The first answers are the door's own and keep the connection; the last says it closes.
    for (const a of answers.slice(0, 3)) assert.match(a.head, /\r\nConnection: keep-alive\r\nKeep-Alive: timeout=10(\r\n|$)/);
    assert.match(answers[0]!.head, /\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT(\r\n|$)/);
    assert.match(answers[4]!.head, /\r\nConnection: close(\r\n|$)/);
  });
});

test('plain requests one after another on a kept connection, then a body: every answer, in order, on the same connection', async () => {
  await onHttpsRoute('steps', echoCall, async (port) => {
    const host = 'Host: steps.example.test\r\n';
    const steps = [
      `GET /steps/1 HTTP/1.1\r\n${host}\r\n`,
      `HEAD /steps/2 HTTP/1.1\r\n${host}\r\n`,
      `DELETE /steps/3 HTTP/1.1\r\n${host}Content-Length: 0\r\n\r\n`,
      `PUT /steps/4 HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      `GET /steps/5 HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
    ];
    const heads: string[] = [];
    const bodies: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'steps.example.test', rejectUnauthorized: false }, () => socket.write(steps[0]!));
      let got = '';
      let step = 0;
      socket.on('data', (d: Buffer) => {
        got += d.toString('latin1');
        // The answer to HEAD carries no body, whatever it states.
        const a = answerAt(got, step === 1);
        if (a === null) return;
        heads.push(a.head);
        bodies.push(a.body);
        got = got.slice(a.size);
        if (++step < steps.length) socket.write(steps[step]!);
      });
      socket.on('end', () => resolve());
      socket.on('error', reject);
    });
    assert.equal(heads.length, steps.length, heads.join('\n--\n'));
    for (const h of heads) assert.match(h, /^HTTP\/1\.1 200 /, h);
    assert.deepEqual(bodies.filter((b) => b !== '').map((b) => JSON.parse(b)), [
      { method: 'GET', url: '/steps/1', body: '' },
      { method: 'DELETE', url: '/steps/3', body: '' },
      { method: 'PUT', url: '/steps/4', body: 'abc' },
      { method: 'GET', url: '/steps/5', body: '' },
    ]);
    assert.match(heads[1]!, /\r\ncontent-length: \d+/i, 'HEAD states the length');
  });
});

test('what the door does not read itself gets node:http\'s refusals (an unknown method, a folded line, a control character, no Host, a length beside chunks); chunks that cannot be read 400, a head past 16 KiB 431', async () => {
  await onHttpsRoute('odd', echoCall, async (port) => {
    const raw = (text: string) => rawTls(port, 'odd.example.test', text);
    const host = 'Host: odd.example.test\r\n';
    const cases: Array<[string, RegExp]> = [
      [`BREW /odd/x HTTP/1.1\r\n${host}Connection: close\r\n\r\n`, /^HTTP\/1\.1 400 /],
      [`GET /odd/x HTTP/1.1\r\n${host}X-Folded: a\r\n b\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.1 400 /],
      [`GET /odd/x HTTP/1.1\r\n${host}X-Bad: a\x01b\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.1 400 /],
      [`GET /odd/x HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(17 * 1024)}\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.1 431 /],
      [`GET /odd/x HTTP/1.1\r\nConnection: close\r\n\r\n`, /^HTTP\/1\.1 400 /],
      // A length beside a coding: the classic smuggling pair.
      [`POST /odd/x HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n`, /^HTTP\/1\.1 400 /],
      // Chunks the door reads itself and cannot read one way only.
      [`POST /odd/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, /^HTTP\/1\.1 400 /],
      [`POST /odd/x HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n`, /^HTTP\/1\.1 400 /],
    ];
    for (const [text, status] of cases) {
      const answer = await raw(text);
      assert.match(answer, status, `${JSON.stringify(text.slice(0, 80))}: ${answer.slice(0, 200)}`);
    }
    // After a plain request the same refusal, on the same connection.
    const after = await raw(`GET /odd/ok HTTP/1.1\r\n${host}\r\nBREW /odd/x HTTP/1.1\r\n${host}Connection: close\r\n\r\n`);
    assert.deepEqual(answersIn(after).map((a) => a.status), [200, 400], after);
    // Once node:http reads the connection (a target in absolute form handed it over), its refusals
    // reach the client too: a head past 16 KiB gets its 431 though the client was still sending it.
    let big = false;
    const handed = await tlsSession(port, 'odd.example.test', `GET https://odd.example.test/odd/ok HTTP/1.1\r\n${host}\r\n`, (got, write) => {
      if (big || answerAt(got) === null) return;
      big = true;
      write(`GET /odd/x HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(256 * 1024)}\r\n\r\n`);
    });
    assert.deepEqual(answersIn(handed).map((a) => a.status), [200, 431], handed.slice(0, 600));
  });
});

test('a client that leaves before its answer on the HTTPS door: the call to the service is abandoned and nothing stays in flight', async () => {
  let arrived!: () => void;
  const called = new Promise<void>((resolve) => { arrived = resolve; });
  let abandoned!: () => void;
  const left = new Promise<void>((resolve) => { abandoned = resolve; });
  // The service never answers: it waits for the gateway to give up the call.
  await onHttpsRoute('leave', (_req, res) => { res.on('close', () => abandoned()); arrived(); }, async (port) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'leave.example.test', rejectUnauthorized: false }, () => {
      socket.write('GET /leave/slow HTTP/1.1\r\nHost: leave.example.test\r\n\r\n');
    });
    socket.on('error', () => undefined);
    await called;
    const door = t.gw.doors.find((d) => d.plane === 'data' && d.protocol === 'https')!;
    const inFlight = (): number => door.inFlight;
    assert.equal(inFlight(), 1, 'the request is in flight while the service works');
    socket.destroy();
    await left;
    for (let i = 0; i < 100 && inFlight() !== 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(inFlight(), 0, 'nothing stays in flight');
  });
});

test('bodies of a stated length on the HTTPS door: in pieces, large, after 100 Continue, and one the answer comes before (the connection ends once the rest came, read and dropped, never a request)', async () => {
  const measured: UpstreamHandler = (req, res, received) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url: req.url, length: received.bodyLength, sha: received.bodySha256 }));
  };
  await onHttpsRoute('bodies', measured, async (port) => {
    const host = 'Host: bodies.example.test\r\n';
    // A body in three writes with pauses, then the next request on the same connection.
    const pieces = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'bodies.example.test', rejectUnauthorized: false }, () => {
        socket.write(`POST /bodies/pieces HTTP/1.1\r\n${host}Content-Length: 12\r\n\r\nhell`);
        setTimeout(() => socket.write('o, wo'), 30);
        setTimeout(() => socket.write(`rld` + `GET /bodies/next HTTP/1.1\r\n${host}Connection: close\r\n\r\n`), 60);
      });
      let got = '';
      socket.on('data', (d: Buffer) => { got += d.toString('latin1'); });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    const [first, next] = answersIn(pieces);
    assert.deepEqual(JSON.parse(first!.body), { url: '/bodies/pieces', length: 12, sha: createHash('sha256').update('hello, world').digest('hex') });
    assert.equal(JSON.parse(next!.body).url, '/bodies/next');
    // 3 MiB through the door, read as it comes and relayed under back-pressure.
    const big = Buffer.alloc(3 * 1024 * 1024);
    const rnd = mulberry32(11);
    for (let i = 0; i < big.length; i++) big[i] = Math.floor(rnd() * 256);
    const bigAnswer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port, method: 'POST', path: '/bodies/big', servername: 'bodies.example.test', ca, agent: false, headers: { 'content-length': big.length } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => { body += d.toString(); });
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end(big);
    });
    assert.equal(bigAnswer.status, 200, bigAnswer.body);
    assert.deepEqual(JSON.parse(bigAnswer.body), { url: '/bodies/big', length: big.length, sha: createHash('sha256').update(big).digest('hex') });
    // A client that waits for 100 Continue before its body gets it, then its answer.
    const continued = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'bodies.example.test', rejectUnauthorized: false }, () => {
        socket.write(`PUT /bodies/expect HTTP/1.1\r\n${host}Expect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`);
      });
      let got = '';
      socket.on('data', (d: Buffer) => {
        const first = got === '';
        got += d.toString('latin1');
        if (first) {
          assert.match(got, /^HTTP\/1\.1 100 Continue\r\n\r\n/, 'the interim answer comes before the body is sent');
          socket.write('abcde');
        }
      });
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    const final = answersIn(continued.slice(continued.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(JSON.parse(final[0]!.body), { url: '/bodies/expect', length: 5, sha: createHash('sha256').update('abcde').digest('hex') });
    // No route: answered at once, before the stated body came. The connection closes after the
    // answer, and the bytes sent after it are never read as a request.
    const inside = `GET /bodies/smuggled HTTP/1.1\r\n${host}\r\n`;
    const early = await rawTls(port, 'bodies.example.test', `POST /nowhere HTTP/1.1\r\n${host}Content-Length: 100000\r\n\r\n${inside}${'x'.repeat(100_000 - inside.length)}`);
    const answers = answersIn(early);
    assert.equal(answers.length, 1, early);
    assert.equal(answers[0]!.status, 404, early);
    assert.match(answers[0]!.head, /\r\nConnection: close(\r\n|$)/);
    assert.ok(!up.requests.some((r) => r.url === '/bodies/smuggled'), 'the bytes inside the body never reached the service as a request');
    // A client still uploading when the answer comes gets it whole, and an orderly end: the rest
    // of its body is read and dropped, not left to reset the connection.
    const upload = await new Promise<{ got: string; error: string | null; sentAtEnd: number }>((resolve) => {
      const piece = Buffer.alloc(64 * 1024, 0x61);
      const pieces = 16;
      let sent = 0;
      const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'bodies.example.test', rejectUnauthorized: false }, () => {
        socket.write(`POST /nowhere HTTP/1.1\r\n${host}Content-Length: ${piece.length * pieces}\r\n\r\n`);
        // The body goes on after the answer came, a piece every few milliseconds.
        const more = (): void => {
          if (socket.destroyed) return;
          socket.write(piece);
          if (++sent < pieces) setTimeout(more, 10);
        };
        more();
      });
      let got = '';
      socket.on('data', (d: Buffer) => { got += d.toString('latin1'); });
      socket.on('end', () => resolve({ got, error: null, sentAtEnd: sent }));
      socket.on('error', (err: NodeJS.ErrnoException) => resolve({ got, error: err.code ?? err.message, sentAtEnd: sent }));
    });
    assert.equal(upload.error, null, `the connection ended in order (${upload.got.slice(0, 100)})`);
    assert.equal(upload.sentAtEnd, 16, 'the door ended the connection once the whole body came, not while the client was still sending');
    assert.equal(answersIn(upload.got)[0]!.status, 404);
  });
});

/**
 * One HTTPS connection: `first` is written once connected; `next` is told each time more came and
 * may write; the promise gives all that came once the door ended the connection.
 */
function tlsSession(port: number, servername: string, first: string, next: (got: string, write: (text: string) => void) => void): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => socket.write(first));
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      next(got, (text) => socket.write(text));
    });
    socket.on('end', () => resolve(got));
    socket.on('error', reject);
  });
}

test('the HTTPS door\'s time limits run on the gateway\'s clock: a head still coming after 60 s and a body still coming after 300 s get 408, within them they are served', async () => {
  await onHttpsRoute('limits', echoCall, async (port) => {
    const host = 'Host: limits.example.test\r\n';
    const control = t.url('control');
    /** After the first answer, the second head has begun: the clock moves `by`, then the head's end comes. */
    const trickledHead = (by: string) => {
      let moved = false;
      return tlsSession(port, 'limits.example.test', `GET /limits/first HTTP/1.1\r\n${host}\r\nGET /limits/second HTTP/1.1\r\nHo`, (got, write) => {
        if (moved || answerAt(got) === null) return;
        moved = true;
        advanceClock(control, by).then(() => write(`st: limits.example.test\r\nConnection: close\r\n\r\n`), () => write('x'));
      });
    };
    const late = answersIn(await trickledHead('PT61S'));
    assert.deepEqual(late.map((a) => a.status), [200, 408], JSON.stringify(late));
    assert.match(late[1]!.head, /\r\nConnection: close(\r\n|$)/);
    const inTime = answersIn(await trickledHead('PT59S'));
    assert.deepEqual(inTime.map((a) => [a.status, JSON.parse(a.body).url]), [[200, '/limits/first'], [200, '/limits/second']]);

    /** 100 Continue says the door read the head: part of the body comes, the clock moves `by`, then the rest. */
    const trickledBody = (by: string) => {
      let moved = false;
      return tlsSession(port, 'limits.example.test', `POST /limits/body HTTP/1.1\r\n${host}Expect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\n`, (got, write) => {
        if (moved || !got.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) return;
        moved = true;
        write('abc');
        advanceClock(control, by).then(() => write('de'), () => write('!'));
      });
    };
    const before = up.requests.length;
    const slow = await trickledBody('PT301S');
    const slowAnswers = answersIn(slow.slice(slow.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(slowAnswers.map((a) => a.status), [408], slow);
    assert.equal(up.requests.length, before, 'the service never got a whole request');
    const onTime = await trickledBody('PT299S');
    const onTimeAnswers = answersIn(onTime.slice(onTime.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(onTimeAnswers.map((a) => [a.status, JSON.parse(a.body).body]), [[200, 'abcde']], onTime);
  });
});

test('a client that stops reading a long answer and leaves: on either door the relay stops waiting and the service\'s call is abandoned', async () => {
  let written = 0;
  let abandoned!: () => void;
  let left = new Promise<void>((resolve) => { abandoned = resolve; });
  // The service streams without end, as fast as the gateway takes it.
  await onHttpsRoute('stall', (_req, res) => {
    written = 0;
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const piece = Buffer.alloc(64 * 1024, 0x62);
    const more = (): void => {
      for (;;) {
        if (res.destroyed) return;
        written += piece.length;
        if (!res.write(piece)) break;
      }
      if (!res.destroyed) res.once('drain', more);
    };
    res.on('close', () => abandoned());
    more();
  }, async (tlsPort) => {
    const plainPort = Number(new URL(t.url('data')).port);
    for (const door of ['plain', 'https'] as const) {
      const socket = door === 'https'
        ? tlsConnect({ host: '127.0.0.1', port: tlsPort, servername: 'stall.example.test', rejectUnauthorized: false })
        : (await import('node:net')).connect(plainPort, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET /stall/x HTTP/1.1\r\nHost: stall.example.test\r\n\r\n');
      // Never read: the client's window, the gateway's socket and then the service fill, and the relay waits.
      socket.pause();
      for (let i = 0; i < 400 && written === 0; i++) await new Promise((r) => setTimeout(r, 10));
      let last = -1;
      for (let i = 0; i < 400 && written !== last; i++) {
        last = written;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.ok(written > 0, `${door}: the service wrote before it had to wait`);
      socket.destroy();
      await left;
      const d = t.gw.doors.find((x) => x.plane === 'data' && x.protocol === (door === 'https' ? 'https' : 'http'))!;
      for (let i = 0; i < 100 && d.inFlight !== 0; i++) await new Promise((r) => setImmediate(r));
      assert.equal(d.inFlight, 0, `${door}: nothing stays in flight`);
      left = new Promise<void>((resolve) => { abandoned = resolve; });
    }
  });
});
