/**
 * The upstream answer's reader: every framing a proxy relays, read the same however the socket
 * splits the bytes, and every answer that could be read two ways refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtocolError, ResponseParser } from '../../src/pipeline/h1/response-parser.ts';
import { mulberry32 } from '../helpers/random.ts';

interface Read {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
  ended: boolean;
  reusable: boolean | null;
}

function reader(headRequest = false): { parser: ResponseParser; got: Read } {
  const got: Read = { status: 0, headers: {}, body: '', ended: false, reusable: null };
  const parser = new ResponseParser({
    head: (status, headers) => { got.status = status; got.headers = { ...headers }; },
    data: (chunk) => { got.body += chunk.toString('latin1'); },
    end: (reusable) => { got.ended = true; got.reusable = reusable; },
  }, headRequest);
  return { parser, got };
}

/** Reads `wire` cut at the given places. */
function readSplit(wire: string, cuts: number[], headRequest = false): Read {
  const { parser, got } = reader(headRequest);
  const bytes = Buffer.from(wire, 'latin1');
  let at = 0;
  for (const cut of [...cuts.sort((a, b) => a - b), bytes.length]) {
    if (cut > at) parser.execute(bytes.subarray(at, cut));
    at = Math.max(at, cut);
  }
  return got;
}

const LENGTH = 'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nContent-Length: 11\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nhello world';
const CHUNKED = 'HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n5;name=x\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: t\r\n\r\n';

test('a body of a stated length and a chunked body read the same at every split of the bytes', () => {
  for (const [wire, status] of [[LENGTH, 200], [CHUNKED, 201]] as const) {
    const whole = readSplit(wire, []);
    assert.equal(whole.status, status);
    assert.equal(whole.body, 'hello world');
    assert.equal(whole.ended, true);
    assert.equal(whole.reusable, true);
    for (let i = 1; i < wire.length; i++) assert.deepEqual(readSplit(wire, [i]), whole, `split at ${i}`);
    const rnd = mulberry32(7);
    for (let n = 0; n < 200; n++) {
      const cuts = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => Math.floor(rnd() * wire.length));
      assert.deepEqual(readSplit(wire, cuts), whole, `cuts ${cuts.join(',')}`);
    }
  }
  const h = readSplit(LENGTH, []).headers;
  assert.deepEqual(h['set-cookie'], ['a=1', 'b=2'], 'repeated headers kept apart, names in lower case');
  assert.equal(h['content-length'], '11');
});

test('no body after a HEAD, a 204 or a 304, whatever the head says; informational heads are passed over', () => {
  const head = readSplit('HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n', [], true);
  assert.deepEqual([head.status, head.body, head.ended, head.reusable, head.headers['content-length']], [200, '', true, true, '500']);
  for (const status of [204, 304]) {
    const r = readSplit(`HTTP/1.1 ${status} X\r\netag: "a"\r\n\r\n`, []);
    assert.deepEqual([r.status, r.body, r.ended, r.reusable], [status, '', true, true]);
  }
  const early = readSplit('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok', [30]);
  assert.deepEqual([early.status, early.body, early.headers['link']], [200, 'ok', undefined]);
});

test('a body without a length runs to the close, and the connection is not kept', () => {
  const { parser, got } = reader();
  parser.execute(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\npart one, '));
  parser.execute(Buffer.from('part two'));
  assert.equal(got.ended, false);
  parser.closed();
  assert.deepEqual([got.body, got.ended, got.reusable], ['part one, part two', true, false]);
});

test('what ends the connection with the answer: close, HTTP/1.0, a length beside a coding, bytes after the answer', () => {
  assert.equal(readSplit('HTTP/1.1 200 OK\r\nconnection: keep-alive, Close\r\ncontent-length: 0\r\n\r\n', []).reusable, false);
  assert.equal(readSplit('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', []).reusable, false);
  const both = readSplit('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n', []);
  assert.deepEqual([both.body, both.reusable], ['hello', false], 'the coding wins over the length, and nothing more is read on it');
  assert.equal(both.headers['content-length'], undefined, 'the length beside a coding is not handed on: the client would be told a length the body does not have');
  const extra = readSplit('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n', []);
  assert.deepEqual([extra.body, extra.ended, extra.reusable], ['ok', true, false]);
});

test('answers that could be read two ways are refused', () => {
  const refused = (wire: string, why: RegExp, headRequest = false) => {
    const { parser } = reader(headRequest);
    assert.throws(() => parser.execute(Buffer.from(wire, 'latin1')), (err: unknown) => err instanceof ProtocolError && why.test(err.message), wire);
  };
  refused('HTTP/1.1 200 OK\nx: y\r\n\r\n', /bare CR or LF/);
  // A coding other than chunked would reach the client undone and unannounced (Transfer-Encoding is hop-by-hop).
  refused('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\nabc', /Transfer-Encoding holds gzip/);
  refused('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n', /Transfer-Encoding holds gzip/);
  refused('HTTP/1.1 200 OK\r\nx: y\rz\r\n\r\n', /bare CR or LF/);
  refused('HTTP/1.1 200 OK\r\nx: y\r\n folded\r\n\r\n', /folds/);
  refused('HTTP/1.1 200 OK\r\nx: y\r\n\tx-b: 2\r\n\r\n', /folds/);
  refused('HTTP/1.1 200 OK\r\nbad name: y\r\n\r\n', /not a token/);
  refused('HTTP/1.1 200 OK\r\nx : y\r\n\r\n', /not a token/);
  refused('HTTP/1.1 200 OK\r\nx: a\x00b\r\n\r\n', /control character/);
  refused('HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\n', /not one number/);
  refused('HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\n', /not one number/);
  refused('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /not one number/);
  refused('HTTP/1.1 200 OK\r\ncontent-length: 0x10\r\n\r\n', /not one number/);
  refused('HTTP/2 200 OK\r\n\r\n', /not HTTP\/1/);
  refused('HTTP/1.1 20 OK\r\n\r\n', /not HTTP\/1/);
  refused('HTTP/1.1 200 O\x01K\r\n\r\n', /not HTTP\/1/);
  refused('HTTP/1.1 200\tOK\r\n\r\n', /not HTTP\/1/);
  refused('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n', /switched protocols/);
  refused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /not a hexadecimal/);
  refused('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n', /longer than its size/);
  refused(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}\r\n\r\n`, /larger than/);
  refused(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}`, /larger than/);
  // Identical lengths repeated are one length (RFC 9110 8.6).
  assert.equal(readSplit('HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 2\r\n\r\nok', []).body, 'ok');
});

test('a connection that closes before the answer or in its middle is a refusal, not an empty answer', () => {
  for (const wire of ['', 'HTTP/1.1 200 OK\r\ncontent-len', 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel']) {
    const { parser, got } = reader();
    if (wire !== '') parser.execute(Buffer.from(wire));
    assert.throws(() => parser.closed(), ProtocolError, JSON.stringify(wire));
    assert.equal(got.ended, false);
  }
});
