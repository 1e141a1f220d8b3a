/**
 * What the data plane hands the AuditBatcher for an audited call: the body's kept bytes in a buffer
 * of their own (a structured clone copies a view's whole underlying buffer), and of the request's
 * headers only those the line reads.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestRecord } from '../../src/pipeline/request-record.ts';
import type { RequestHead } from '../../src/http/exchange.ts';
import { keptBody, neededHeaders } from '../../src/planes/data/endpoint-audit.ts';
import { compileOperationAudit } from '../../src/core/audit/operations.ts';

const HEAD = { method: 'POST', path: '/orders', query: '', headers: {}, remoteAddress: '127.0.0.1', plane: 'data', receivedAt: 0 } as unknown as RequestHead;

function recordWith(chunks: readonly Uint8Array[]): RequestRecord {
  const record = new RequestRecord(HEAD, 0);
  record.bodyLimit = 64 * 1024;
  chunks.forEach((c, i) => record.keep(c, i === chunks.length - 1));
  return record;
}

test('the kept body crosses in a buffer of its own size, whatever it was a view of', () => {
  const window = Buffer.alloc(64 * 1024, 0x2e);
  window.write('{"sku":"S1"}', 100, 'latin1');
  const view = window.subarray(100, 112);
  const one = keptBody(recordWith([view]))!;
  assert.equal(one.bytes!.byteLength, 12);
  assert.equal(one.bytes!.buffer.byteLength, 12, 'not the 64 KiB buffer it was read into');
  assert.equal(Buffer.from(one.bytes!).toString(), '{"sku":"S1"}');
  assert.equal(structuredClone(one.bytes!).buffer.byteLength, 12);

  const two = keptBody(recordWith([Buffer.from('{"a":'), Buffer.from('1}')]))!;
  assert.equal(two.bytes!.buffer.byteLength, 7);
  assert.equal(Buffer.from(two.bytes!).toString(), '{"a":1}');
  assert.deepEqual([two.size, two.complete], [7, true]);

  // A chunk that is already its buffer's whole is handed on as it is, not copied again.
  const own = new Uint8Array(Buffer.from('{"b":2}'));
  assert.equal(keptBody(recordWith([own]))!.bytes, own);
});

test('a call refused before its body, a body past the limit, an empty body', () => {
  const refused = new RequestRecord(HEAD, 0);
  assert.equal(keptBody(refused), undefined, 'never asked for');
  const empty = new RequestRecord(HEAD, 0);
  empty.bodyLimit = 10;
  assert.deepEqual(keptBody(empty), { bytes: new Uint8Array(0), size: 0, complete: true });
  const large = new RequestRecord(HEAD, 0);
  large.bodyLimit = 10;
  large.tooLarge(11);
  assert.deepEqual(keptBody(large), { bytes: null, size: 11, complete: true });
});

test('only the headers the line reads cross: the body\'s type and those the fields name, never the credentials', () => {
  const contract = { paths: { '/orders': { post: { summary: 'Place' } }, '/orders/{id}': { get: {} } } };
  const index = compileOperationAudit(contract, {
    operations: {
      'POST /orders': { on: true, body: true, fields: { request: 'header:X-Request-Id', tenant: 'header:x-tenant' } },
      'GET /orders/{id}': { on: true, fields: { order: 'path:id' } },
    },
  })!;
  const headers = {
    'content-type': 'application/json', 'x-request-id': 'r-1', authorization: 'Bearer mk_secret', cookie: 'meerkat_app=s', 'user-agent': 'curl',
  };
  const post = index.match('POST', '/orders')!.operation;
  assert.deepEqual({ ...neededHeaders(post, headers) }, { 'content-type': 'application/json', 'x-request-id': 'r-1' }, 'x-tenant was not sent');
  const get = index.match('GET', '/orders/7')!.operation;
  assert.deepEqual({ ...neededHeaders(get, headers) }, {}, 'no body read, no header named');
});
