/**
 * Messages framed two ways (RFC 9112 6.3) through both doors of the data plane. A service's
 * answer: the gateway reads the body one way and tells the client only what it read, so nothing
 * the service sent can reach the client as the answer to its next request on the same
 * connection. A client's request: refused, and the connection closed, so no byte after it can be
 * taken for a request the gateway never judged.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { startTestGateway, ROOT_PASSWORD, type TestGateway } from '../helpers/gateway.ts';
import { call, signIn } from '../helpers/http.ts';
import { closedPort, rawService } from '../helpers/upstream.ts';

let t: TestGateway;
let service: Awaited<ReturnType<typeof rawService>>;
let plainPort: number;
let tlsPort: number;

const SMUGGLED = 'HTTP/1.1 302 Found\r\nlocation: https://evil.example/\r\nset-cookie: session=attacker\r\ncontent-length: 9\r\n\r\nSMUGGLED!';

/** What the service answers, by the path's last segment. */
function answerFor(name: string): string {
  if (name === 'length-and-chunked' || name === 'short-of-length') {
    // The chunked body carries a whole answer after its filler; the length beside it is larger or smaller than the body.
    const filler = 'A'.repeat(name === 'length-and-chunked' ? 70_000 : 69_000);
    const body = filler + SMUGGLED;
    const stated = name === 'length-and-chunked' ? 70_000 : 80_000;
    return `HTTP/1.1 200 OK\r\ncontent-length: ${stated}\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  }
  if (name === 'small-length-and-chunked') return `HTTP/1.1 200 OK\r\ncontent-length: 2\r\ntransfer-encoding: chunked\r\n\r\n${(2 + SMUGGLED.length).toString(16)}\r\nok${SMUGGLED}\r\n0\r\n\r\n`;
  return 'HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecond';
}

before(async () => {
  tlsPort = await closedPort();
  t = await startTestGateway({ GATEWAY_TLS_ADDR: `127.0.0.1:${tlsPort}` });
  service = await rawService((head, socket) => socket.write(answerFor(/^GET \/framing\/([a-z-]+)/.exec(head)?.[1] ?? '')));
  const c = t.url('control');
  const admin = { cookie: await signIn(c, 'root', ROOT_PASSWORD), origin: c };
  const route = await call(`${c}/api/routes/framing`, { method: 'PUT', headers: admin, body: { upstream: service.origin, paths: ['/framing'], rule: null } });
  assert.ok(route.status === 200 || route.status === 201, route.text);
  const cert = await call(`${c}/api/certificates`, { method: 'POST', headers: admin, body: { source: 'self-signed', names: ['framing.example.test'] } });
  assert.equal(cert.status, 201, cert.text);
  const placed = await call(`${c}/api/certificates/${cert.json.id}/placement`, { method: 'PUT', headers: admin, body: { planes: ['app'] } });
  assert.equal(placed.status, 200, placed.text);
  plainPort = Number(new URL(t.url('data')).port);
});

after(async () => {
  await t?.close();
  service?.server.close();
});

/** Everything the client reads on one connection after sending `requests` at once, until the gateway closes it or goes quiet. */
function exchange(door: 'plain' | 'tls', requests: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = door === 'plain'
      ? netConnect(plainPort, '127.0.0.1')
      : tlsConnect({ port: tlsPort, host: '127.0.0.1', servername: 'framing.example.test', rejectUnauthorized: false });
    let got = '';
    let quiet: NodeJS.Timeout | undefined;
    const done = () => { clearTimeout(quiet); socket.destroy(); resolve(got); };
    // The answers come at once from a service on loopback: a second without a byte means the gateway has said all it will.
    const wait = () => { clearTimeout(quiet); quiet = setTimeout(done, 1000); };
    socket.on(door === 'plain' ? 'connect' : 'secureConnect', () => {
      // One after the other, as a client reusing its connection does: the second goes once the first answer's head is in.
      socket.write(requests[0]!);
      wait();
    });
    let sent = 1;
    socket.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (sent < requests.length && got.includes('\r\n\r\n')) socket.write(requests[sent++]!);
      if (sent === requests.length && got.endsWith('\r\n\r\nsecond')) done();
      else wait();
    });
    socket.on('close', done);
    socket.on('error', (err) => (got === '' ? reject(err) : done()));
  });
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nhost: framing.example.test\r\n\r\n`;

for (const door of ['plain', 'tls'] as const) {
  for (const name of ['length-and-chunked', 'short-of-length', 'small-length-and-chunked']) {
    test(`${door} door: a length beside a chunked coding (${name}) is never told to the client, and nothing follows the answer but the next one`, async () => {
      const got = await exchange(door, [get(`/framing/${name}`), get('/framing/next')]);
      const first = readAnswer(got);
      assert.ok(first, `the first answer is the service's 200, whole: ${got.slice(0, 200)}`);
      assert.equal(first.status, 200);
      assert.notEqual(first.length, name === 'short-of-length' ? 80_000 : name === 'length-and-chunked' ? 70_000 : 2, 'the length the service stated beside its coding is not told');
      assert.ok(first.body.endsWith(SMUGGLED), 'what the service sent in its body stays in the body');
      const rest = got.slice(first.consumed);
      assert.match(rest, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nsecond$/, `the next answer on the connection is the next request's: ${rest.slice(0, 200)}`);
    });
  }
}

/** The answer at the start of `s`, read by its own framing (a length, or chunks), or null when it is not whole. */
function readAnswer(s: string): { status: number; length: number | null; body: string; consumed: number } | null {
  const end = s.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const head = s.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
  let at = end + 4;
  if (cl) {
    const length = Number(cl[1]);
    if (s.length < at + length) return null;
    return { status, length, body: s.slice(at, at + length), consumed: at + length };
  }
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) return null;
  let body = '';
  for (;;) {
    const eol = s.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(s.slice(at, eol), 16);
    if (!Number.isFinite(size)) return null;
    at = eol + 2;
    if (size === 0) {
      // No trailers from the gateway: the empty line ends the body.
      if (s.slice(at, at + 2) !== '\r\n') return null;
      return { status, length: null, body, consumed: at + 2 };
    }
    body += s.slice(at, at + size);
    at += size;
    if (s.slice(at, at + 2) !== '\r\n') return null;
    at += 2;
  }
}

const AMBIGUOUS: Record<string, string> = {
  'two lengths': 'content-length: 5\r\ncontent-length: 30\r\n\r\nhello',
  'two lengths, the same': 'content-length: 5\r\ncontent-length: 5\r\n\r\nhello',
  'a length that is not a number': 'content-length: +5\r\n\r\nhello',
  'a coding that is not chunked': 'transfer-encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  'chunked, then another coding': 'transfer-encoding: chunked, identity\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
  'the coding twice': 'transfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
};

for (const door of ['plain', 'tls'] as const) {
  test(`${door} door: a request whose body could be framed two ways goes no further, nor does what follows it on the connection`, async () => {
    for (const [what, rest] of Object.entries(AMBIGUOUS)) {
      const before = service.heads.length;
      const smuggled = get('/framing/smuggled');
      const got = await exchange(door, [`POST /framing/next HTTP/1.1\r\nhost: framing.example.test\r\n${rest}${smuggled}`]);
      // node:http answers most of them with 400 itself; the doors cut the rest without an answer.
      assert.match(got, /^(HTTP\/1\.1 400 [^]*\r\n\r\n)?$/, `${what}: at most node:http's 400, then the connection closed: ${got.slice(0, 200)}`);
      if (door === 'plain') assert.equal(got, '', `${what}: the uWS door cuts the connection`);
      assert.deepEqual(service.heads.slice(before), [], `${what}: nothing reached the service`);
    }
  });
}
