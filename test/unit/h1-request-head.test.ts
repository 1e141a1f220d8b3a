/**
 * The heads the HTTPS doors read themselves (src/http/h1-request-head.ts) and those they leave to
 * node:http: HTTP/1.1 and 1.0 in origin form, and what each version's connection does after the answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readPlainHead } from '../../src/http/h1-request-head.ts';

const head = (lines: string[]) => readPlainHead(lines.join('\r\n'));

test('HTTP/1.1: a Host is required; the connection stays unless the client asks to close it', () => {
  const kept = head(['GET /a/b?x=1 HTTP/1.1', 'Host: api.example', 'Cookie: a=1', 'cookie: b=2', 'Accept: x', 'accept: y']);
  assert.ok(kept);
  assert.deepEqual([kept.method, kept.path, kept.query, kept.close, kept.http10], ['GET', '/a/b', 'x=1', false, false]);
  assert.deepEqual({ ...kept.headers }, { host: 'api.example', cookie: 'a=1; b=2', accept: 'x, y' });
  assert.equal(head(['GET / HTTP/1.1', 'Host: a', 'Connection: keep-alive, close'])?.close, true);
  assert.equal(head(['GET / HTTP/1.1', 'Accept: */*']), null, 'no Host');
  assert.equal(head(['POST / HTTP/1.1', 'Host: a', 'Expect: 100-continue', 'Content-Length: 3'])?.expectsContinue, true);
});

test('HTTP/1.0: read by the door, no Host needed; the connection closes unless the client asks to keep it', () => {
  const old = head(['GET /old HTTP/1.0', 'User-Agent: ApacheBench/2.3']);
  assert.ok(old);
  assert.deepEqual([old.path, old.close, old.http10, old.length, old.chunked], ['/old', true, true, 0, false]);
  assert.equal(head(['GET /old HTTP/1.0', 'Connection: Keep-Alive'])?.close, false);
  assert.equal(head(['GET /old HTTP/1.0', 'Connection: keep-alive, close'])?.close, true);
  const body = head(['POST /old HTTP/1.0', 'Content-Length: 5', 'Expect: 100-continue']);
  assert.deepEqual([body?.length, body?.expectsContinue], [5, false], 'an HTTP/1.0 client\'s 100-continue is ignored: it does not wait');
  assert.equal(head(['POST /old HTTP/1.0', 'Transfer-Encoding: chunked']), null, 'HTTP/1.0 has no chunks: node:http judges it');
});

test('everything else is left to node:http: other versions, other targets, upgrades, two framings, odd lines', () => {
  const refused = [
    ['GET / HTTP/1.2', 'Host: a'], ['GET / HTTP/2.0', 'Host: a'], ['GET / HTTP/1.10', 'Host: a'], ['GET / HTTP/1.', 'Host: a'],
    ['GET http://a/ HTTP/1.1', 'Host: a'], ['OPTIONS * HTTP/1.1', 'Host: a'], ['CONNECT a:443 HTTP/1.1', 'Host: a:443'],
    ['BREW / HTTP/1.1', 'Host: a'], ['GET /a#b HTTP/1.1', 'Host: a'],
    ['GET / HTTP/1.1', 'Host: a', 'Upgrade: websocket', 'Connection: Upgrade'], ['GET / HTTP/1.0', 'Connection: upgrade'],
    ['POST / HTTP/1.1', 'Host: a', 'Content-Length: 3', 'Transfer-Encoding: chunked'],
    ['POST / HTTP/1.1', 'Host: a', 'Content-Length: 3', 'Content-Length: 3'], ['POST / HTTP/1.1', 'Host: a', 'Transfer-Encoding: gzip, chunked'],
    ['GET / HTTP/1.1', 'Host: a', 'Expect: something'], ['GET / HTTP/1.0', 'Expect: something'],
    ['GET / HTTP/1.1', 'Host: a', ' folded'], ['GET / HTTP/1.1', 'Host: a', 'Bad Name: x'], ['GET / HTTP/1.1', 'Host: a\x01'],
  ];
  for (const lines of refused) assert.equal(head(lines), null, JSON.stringify(lines));
});
