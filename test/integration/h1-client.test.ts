/**
 * The data plane's HTTP/1.1 client against real sockets: connections kept and reused, a kept
 * connection the service closed as the request went out sent again once, what cannot be written
 * refused before a byte leaves, timeouts, and a cut answer.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { getHeapSnapshot } from 'node:v8';
import type { Dispatcher } from 'undici';
import { H1Pool, type H1Request } from '../../src/pipeline/h1/client.ts';
import { until } from '../helpers/until.ts';
import { rawService } from '../helpers/upstream.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  error: (Error & { code?: string }) | null;
}

function call(pool: H1Pool, req: Partial<H1Request> & { path: string }): Promise<Answer> {
  return new Promise((resolve) => {
    const got: Answer = { status: 0, headers: {}, body: '', error: null };
    const handler: Dispatcher.DispatchHandler = {
      onResponseStart: (_c, status, headers) => { got.status = status; got.headers = headers as Answer['headers']; },
      onResponseData: (_c, chunk) => { got.body += chunk.toString(); },
      onResponseEnd: () => resolve(got),
      onResponseError: (_c, err) => { got.error = err; resolve(got); },
    };
    pool.dispatch({ method: 'GET', headers: {}, body: null, headersTimeout: 5_000, bodyTimeout: 5_000, ...req }, handler);
  });
}

const servers: Server[] = [];
after(() => { for (const s of servers) s.close(); });

test('connections are kept and reused; the head carries the origin\'s Host and the body\'s own length', async () => {
  const svc = await rawService((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  for (let i = 0; i < 5; i++) assert.equal((await call(pool, { path: `/n${i}` })).body, 'ok');
  assert.equal(svc.connections(), 1, 'one connection for requests one after the other');
  const posted = await call(pool, { method: 'POST', path: '/p', headers: { 'content-length': '999', 'x-a': 'b' }, body: Buffer.from('hello') });
  assert.equal(posted.status, 200);
  const head = svc.heads.at(-1)!;
  assert.match(head, /^POST \/p HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\nx-a: b\r\ncontent-length: 5$/, 'the declared length is the body\'s, not the caller\'s');
  assert.match(svc.heads[0]!, /^GET \/n0 HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+$/);
  await pool.close();
});

test('a kept connection the service closes as the request goes out: sent again once on a new one', async () => {
  const svc = await rawService((_head, socket, n) => {
    // The second request finds its connection closed by the service, nothing answered.
    if (n === 2) socket.destroy();
    else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  assert.equal((await call(pool, { path: '/1' })).body, 'ok');
  const again = await call(pool, { path: '/2' });
  assert.equal(again.error, null);
  assert.equal(again.body, 'ok');
  assert.equal(svc.heads.length, 3, 'the request reached the service twice');
  assert.equal(svc.connections(), 2);
  await pool.close();
});

test('a POST or PATCH is never sent twice: a kept connection closed without an answer is a failure', async () => {
  const svc = await rawService((_head, socket, n) => {
    // The service reads the whole request, may have acted on it, then closes without answering.
    if (n >= 2) socket.destroy();
    else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  assert.equal((await call(pool, { path: '/1' })).body, 'ok');
  const paid = await call(pool, { method: 'POST', path: '/pay', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"amount":100}') });
  assert.ok(paid.error, 'a failure, not a second try');
  assert.equal(svc.heads.filter((h) => h.startsWith('POST /pay')).length, 1, 'the payment reached the service once');
  await pool.close();
});

test('a fresh connection closed without an answer is a failure, not a retry', async () => {
  const svc = await rawService((_head, socket) => socket.destroy());
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  const got = await call(pool, { path: '/x' });
  assert.ok(got.error);
  assert.match(String(got.error.code), /UPSTREAM_CLOSED|ECONNRESET/);
  assert.equal(svc.heads.length, 1);
  await pool.close();
});

test('a header value or a path that would split the request is refused before a byte leaves', async () => {
  const svc = await rawService((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  const refused: Array<Partial<H1Request> & { path: string }> = [
    { path: '/a', headers: { 'x-name': 'bob\r\nx-gateway-user: root' } },
    { path: '/a', headers: { 'x bad': 'v' } },
    { path: '/a', headers: { 'x-wide': 'caf\u0113' } },
    { path: '/a HTTP/1.1\r\nx: y' },
    { path: '/a\u0100' },
  ];
  for (const req of refused) {
    const got = await call(pool, req);
    assert.equal(got.error?.code, 'REQUEST_UNWRITABLE', JSON.stringify(req));
  }
  assert.equal(svc.heads.length, 0, 'nothing reached the service');
  assert.equal((await call(pool, { path: '/fine', headers: { 'x-latin': 'caf\u00e9' } })).status, 200);
  await pool.close();
});

test('header lines kept from the request before are reused only for the same name and value at the same place', async () => {
  const svc = await rawService((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'));
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 1, keepAliveMs: 30_000 });
  const lines = (head: string) => head.split('\r\n').slice(2).filter((l) => l !== '');
  assert.equal((await call(pool, { path: '/1', headers: { 'x-a': 'one', 'x-b': 'two', authorization: 'Bearer first' } })).status, 200);
  // The same names, one value changed into one that would split the request: refused, not the kept line.
  const split = await call(pool, { path: '/2', headers: { 'x-a': 'one', 'x-b': 'two\r\nx-gateway-user: root', authorization: 'Bearer first' } });
  assert.equal(split.error?.code, 'REQUEST_UNWRITABLE');
  // The same values at other places, a value changed, a header left out: each line is its own.
  assert.equal((await call(pool, { path: '/3', headers: { 'x-b': 'two', 'x-a': 'one', authorization: 'Bearer second' } })).status, 200);
  assert.equal((await call(pool, { path: '/4', headers: { 'x-a': 'one', authorization: 'Bearer second' } })).status, 200);
  assert.equal((await call(pool, { path: '/5', headers: { 'x-a': 'one', 'x-b': 'two', authorization: 'Bearer first' } })).status, 200);
  assert.deepEqual(svc.heads.map(lines), [
    ['x-a: one', 'x-b: two', 'authorization: Bearer first'],
    ['x-b: two', 'x-a: one', 'authorization: Bearer second'],
    ['x-a: one', 'authorization: Bearer second'],
    ['x-a: one', 'x-b: two', 'authorization: Bearer first'],
  ]);
  await pool.close();
});

test('no head in time, an answer that stops, an answer cut short: each a failure with its code', async () => {
  const svc = await rawService((head, socket) => {
    if (head.startsWith('GET /silent')) return;
    if (head.startsWith('GET /stops')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
    if (head.startsWith('GET /cut')) socket.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 4, keepAliveMs: 30_000 });
  const started = Date.now();
  const timed = <T>(p: Promise<T>) => p.then((v) => ({ ...v, ms: Date.now() - started }));
  const [silent, stops, cut] = await Promise.all([
    timed(call(pool, { path: '/silent', headersTimeout: 300 })),
    timed(call(pool, { path: '/stops', bodyTimeout: 300 })),
    call(pool, { path: '/cut' }),
  ]);
  assert.equal(silent.error?.code, 'UPSTREAM_HEADERS_TIMEOUT');
  // Deadlines are counted from the sweep's time, plus a sweep: never before the limit.
  assert.ok(silent.ms >= 300 && stops.ms >= 300, `timed out after ${silent.ms} and ${stops.ms} ms`);
  assert.equal(stops.error?.code, 'UPSTREAM_BODY_TIMEOUT');
  assert.equal(stops.status, 200, 'the head had come');
  assert.equal(cut.error?.code, 'UPSTREAM_PROTOCOL');
  await pool.destroy();
});

test('a streamed body goes chunked without a length, under its length with one, and the service reads it whole', async () => {
  // What arrives, as it arrives (rawService frames by Content-Length only).
  const seen: string[] = [];
  const raw = createServer((socket) => {
    let all = '';
    socket.on('data', (d) => {
      all += d.toString('latin1');
      if (all.endsWith('0\r\n\r\n') || /content-length: 6\r\n\r\nab\+cd!$/.test(all)) {
        seen.push(all);
        socket.write('HTTP/1.1 204 No Content\r\n\r\n');
        all = '';
      }
    });
  });
  servers.push(raw);
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
  const pool = new H1Pool(`http://127.0.0.1:${(raw.address() as AddressInfo).port}`, { connections: 1, keepAliveMs: 30_000 });
  async function* pieces() { yield Buffer.from('ab'); yield Buffer.from('+cd!'); }
  assert.equal((await call(pool, { method: 'POST', path: '/s', body: pieces() })).status, 204);
  assert.match(seen[0]!, /transfer-encoding: chunked\r\n\r\n2\r\nab\r\n4\r\n\+cd!\r\n0\r\n\r\n$/);
  assert.equal((await call(pool, { method: 'POST', path: '/s', headers: { 'content-length': '6' }, body: pieces() })).status, 204);
  assert.match(seen[1]!, /content-length: 6\r\n\r\nab\+cd!$/);
  const short = await call(pool, { method: 'POST', path: '/s', headers: { 'content-length': '9' }, body: pieces() });
  assert.equal(short.error?.code, 'UPSTREAM_REQUEST', 'a body shorter than it said never passes for whole');
  assert.equal(seen.length, 2, 'the service never saw the short one end');
  await pool.destroy();
});

test('an answer whose head and chunk lines are split across reads is read whole: what the parser holds is its own copy', async () => {
  // Each piece goes once the client's loop has read the one before (a turn with a poll phase): it
  // lands in the same read buffer, over the bytes the parser held.
  const pieces = [
    'HTTP/1.1 200 OK\r\ntransfer-enc',
    'oding: chunked\r\nx-answer: yes\r\n\r\n1',
    '0\r\n0123456789abcdef\r\n',
    '0\r\n\r\n',
  ];
  const svc = await rawService((_head, socket) => {
    const next = (i: number): void => {
      if (i < pieces.length) socket.write(pieces[i]!, () => setImmediate(() => setImmediate(() => next(i + 1))));
    };
    next(0);
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 1, keepAliveMs: 30_000 });
  for (let i = 0; i < 2; i++) {
    const got = await call(pool, { path: `/split/${i}` });
    assert.equal(got.error, null);
    assert.equal(got.status, 200);
    assert.equal(got.headers['x-answer'], 'yes');
    assert.equal(got.body, '0123456789abcdef');
  }
  await pool.destroy();
});

test('a paused answer is not read further: a chunk handed on stays as it was until the handler resumes', async () => {
  // The uWS door keeps what its client could not take as the relay gave it (Exchange.write): this is
  // what makes that safe, as the chunk is a view of the connection's read buffer.
  const first = 'a'.repeat(1000);
  const rest = 'b'.repeat(3000);
  let wroteRest = (): void => undefined;
  const restWritten = new Promise<void>((r) => { wroteRest = r; });
  const svc = await rawService((_head, socket) => {
    socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${first.length + rest.length}\r\n\r\n${first}`, () => {
      setImmediate(() => setImmediate(() => socket.write(rest, () => wroteRest())));
    });
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 1, keepAliveMs: 30_000 });
  let controller: Dispatcher.DispatchController | null = null;
  let held: Buffer | null = null;
  let later = '';
  let pausedAt = 0;
  const ended = new Promise<void>((resolve, reject) => {
    pool.dispatch({ method: 'GET', path: '/p', headers: {}, body: null, headersTimeout: 5_000, bodyTimeout: 5_000 }, {
      onResponseStart: (c) => { controller = c; },
      onResponseData: (c, chunk) => {
        if (held === null) {
          held = chunk;
          pausedAt = chunk.length;
          c.pause();
        } else later += chunk.toString();
      },
      onResponseEnd: () => resolve(),
      onResponseError: (_c, err) => reject(err),
    });
  });
  await until(() => (held !== null ? true : undefined), 'the first piece arrives');
  await restWritten;
  // A few turns of the loop, each with a poll phase: a socket still reading would have read the rest by now.
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const heldText = held!.toString();
  assert.equal(heldText, first.slice(0, pausedAt), 'the chunk handed on is unchanged while paused');
  assert.equal(later, '', 'nothing more was handed on while paused');
  controller!.resume();
  await ended;
  // (The view itself is the connection's buffer again: the reads after resuming land in it.)
  assert.equal(heldText + later, first + rest, 'the whole body, once resumed');
  await pool.destroy();
});

test('a request waiting for a connection counts the wait: every connection held by a paused answer, it times out', async () => {
  const svc = await rawService((head, socket) => {
    // The first answer starts and never ends; its caller stops reading.
    if (head.startsWith('GET /held')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\nstart');
    else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
  });
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 1, keepAliveMs: 30_000 });
  const held = new Promise<Error | null>((resolve) => {
    pool.dispatch({ method: 'GET', path: '/held', headers: {}, body: null, headersTimeout: 5_000, bodyTimeout: 1_500 }, {
      onResponseStart: (controller) => controller.pause(),
      onResponseData: () => undefined,
      onResponseEnd: () => resolve(null),
      onResponseError: (_c, err) => resolve(err),
    });
  });
  await until(() => (svc.heads.length === 1 ? true : undefined), 'the held request reached the service');
  const started = Date.now();
  const queued = await call(pool, { path: '/queued', headersTimeout: 400 });
  assert.equal(queued.error?.code, 'UPSTREAM_QUEUE_TIMEOUT', 'the wait for a connection counted');
  assert.ok(Date.now() - started < 1_400, `timed out after ${Date.now() - started} ms`);
  // The caller that stopped reading lets the connection go after the answer's pause limit.
  assert.equal(((await held) as Error & { code?: string })?.code, 'CLIENT_STALLED');
  assert.equal((await call(pool, { path: '/after' })).body, 'ok', 'the connection serves again');
  await pool.close();
});

async function* slowBody(pieces: number, gapMs: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < pieces; i++) {
    await new Promise((r) => setTimeout(r, gapMs));
    yield Buffer.from('x'.repeat(10));
  }
}

test('a slow upload is not the service\'s slowness: the head\'s time starts once the body is sent', async () => {
  const svc = await rawService((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 2, keepAliveMs: 30_000 });
  const got = await call(pool, { method: 'POST', path: '/upload', headers: { 'content-length': '80' }, body: slowBody(8, 100), headersTimeout: 300 });
  assert.equal(got.error, null, String(got.error));
  assert.equal(got.body, 'ok');
  await pool.close();
});

test('an upload that stops moving is cut after the pause limit, and does not count as the service\'s silence', async () => {
  const svc = await rawService((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
  servers.push(svc.server);
  const pool = new H1Pool(svc.origin, { connections: 2, keepAliveMs: 30_000 });
  let release!: () => void;
  const never = new Promise<void>((r) => { release = r; });
  async function* stalled(): AsyncGenerator<Uint8Array> {
    yield Buffer.from('x'.repeat(10));
    await never;
  }
  const started = Date.now();
  const got = await call(pool, { method: 'POST', path: '/stalled', headers: { 'content-length': '20' }, body: stalled(), headersTimeout: 5_000, bodyTimeout: 400 });
  assert.equal(got.error?.code, 'REQUEST_STALLED');
  assert.ok(Date.now() - started < 2_000, `cut after ${Date.now() - started} ms`);
  release();
  assert.equal((await call(pool, { path: '/after' })).body, 'ok');
  await pool.close();
});

test('slow uploads hold at most half the connections: past that an upload waits, and other requests still pass', async () => {
  // Heads as they arrive (before their bodies); each answered once its body is whole.
  const heads: string[] = [];
  const raw = createServer((socket) => {
    let held = '';
    socket.on('data', (d) => {
      held += d.toString('latin1');
      for (;;) {
        const end = held.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = held.slice(0, end);
        if (!heads.includes(head)) heads.push(head);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (held.length < end + 4 + length) return;
        held = held.slice(end + 4 + length);
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      }
    });
    socket.on('error', () => undefined);
  });
  servers.push(raw);
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
  const pool = new H1Pool(`http://127.0.0.1:${(raw.address() as AddressInfo).port}`, { connections: 4, keepAliveMs: 30_000 });
  const releases: Array<() => void> = [];
  const upload = (n: number) => {
    const held = new Promise<void>((r) => { releases[n] = r; });
    async function* body(): AsyncGenerator<Uint8Array> {
      yield Buffer.from('x'.repeat(10));
      await held;
      yield Buffer.from('y'.repeat(10));
    }
    return call(pool, { method: 'PUT', path: `/upload/${n}`, headers: { 'content-length': '20' }, body: body(), headersTimeout: 10_000, bodyTimeout: 10_000 });
  };
  const uploadsSeen = () => heads.filter((h) => h.startsWith('PUT /upload/')).map((h) => h.split(' ')[1]);
  const first = upload(0);
  const second = upload(1);
  await until(() => uploadsSeen().length === 2 || undefined, 'the first two uploads reached the service');
  const third = upload(2);
  // Two connections are left: a plain request passes while three uploads wait on their callers.
  const plain = await call(pool, { path: '/plain' });
  assert.equal(plain.body, 'ok');
  assert.deepEqual(uploadsSeen(), ['/upload/0', '/upload/1'], 'the third upload waits: half the pool is uploading');
  releases[0]!();
  assert.equal((await first).body, 'ok');
  await until(() => uploadsSeen().length === 3 || undefined, 'the third upload starts once the first is sent');
  releases[1]!();
  releases[2]!();
  assert.deepEqual([(await second).body, (await third).body], ['ok', 'ok']);
  await pool.close();
});

/** Every string the heap holds now, as one text (the snapshot collects garbage first). */
async function heapText(): Promise<string> {
  let text = '';
  for await (const chunk of getHeapSnapshot()) text += String(chunk);
  return text;
}

test('a pool keeps no credential of its last request: Authorization, Cookie and the signed identity are made each time', async () => {
  const server = createServer((socket) => socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const pool = new H1Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { connections: 1, keepAliveMs: 30_000 });
  // Values made as flat strings from bytes this test keeps as bytes: the test itself holds no copy of them.
  const secrets = ['authorization', 'proxy-authorization', 'cookie', 'x-gateway-identity', 'x-kept'].map((name) => ({ name, bytes: randomBytes(16) }));
  const headers = () => Object.fromEntries(secrets.map(({ name, bytes }) => [name, Buffer.from(`v=${bytes.toString('hex')}`).toString('latin1')]));
  assert.equal((await call(pool, { path: '/a', headers: headers() })).body, 'ok');
  assert.equal((await call(pool, { path: '/b', headers: headers() })).body, 'ok');
  const heap = await heapText();
  const held = secrets.filter(({ bytes }) => heap.includes(`v=${bytes.toString('hex')}`)).map(({ name }) => name);
  // x-kept is an ordinary header: its line is kept for the next request, which shows the search finds what a pool keeps.
  assert.deepEqual(held, ['x-kept']);
  await pool.close();
});
