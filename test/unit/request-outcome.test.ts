import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestHead } from '../../src/http/exchange.ts';
import { CLIENT_CLOSED, outcomeOf, RequestRecord, RequestRecords, type RecordObserver } from '../../src/pipeline/request-record.ts';

const head: RequestHead = {
  plane: 'data', method: 'GET', path: '/orders/42', query: '', headers: {}, remoteAddress: '198.51.100.4', secure: false, receivedAt: 1_700_000_000_000, receivedMono: 0,
};

type Fields = Pick<RequestRecord, 'status' | 'outcome' | 'error' | 'upstreamAnswered'>;
const gateway = (status: number, error: string | null = null): Fields => ({ status, error, upstreamAnswered: false, outcome: 'answered' });
const service = (status: number): Fields => ({ status, error: null, upstreamAnswered: true, outcome: 'answered' });

test('a status below 400 is ok, the service\'s or the gateway\'s', () => {
  for (const s of [200, 201, 204, 301, 304, 399]) {
    assert.equal(outcomeOf(service(s)), 'ok', `service ${s}`);
    assert.equal(outcomeOf(gateway(s)), 'ok', `gateway ${s}`);
  }
});

test('the service answering 4xx is rejected; 5xx is failed', () => {
  for (const s of [400, 401, 403, 404, 409, 422, 429, 499]) assert.equal(outcomeOf(service(s)), 'rejected', String(s));
  for (const s of [500, 502, 503, 504, 599]) assert.equal(outcomeOf(service(s)), 'failed', String(s));
});

test('the gateway answering 4xx itself is refused; its own 5xx is failed', () => {
  const refusals: Array<[number, string | null]> = [[401, 'auth.required'], [403, 'auth.forbidden'], [404, 'route.not-found'], [400, 'field.invalid'], [429, null], [413, null]];
  for (const [s, code] of refusals) assert.equal(outcomeOf(gateway(s, code)), 'refused', `${s} ${code}`);
  assert.equal(outcomeOf(gateway(500, 'internal')), 'failed');
  assert.equal(outcomeOf(gateway(503)), 'failed');
});

test('the service unreachable, late, untrusted or under the wrong name is upstream-down', () => {
  for (const [code, s] of [['upstream.unreachable', 502], ['upstream.timeout', 504], ['upstream.untrusted', 502], ['upstream.name-mismatch', 502]] as const) {
    assert.equal(outcomeOf(gateway(s, code)), 'upstream-down', code);
    // Even when the caller left before the refusal reached it.
    assert.equal(outcomeOf(gateway(0, code)), 'upstream-down', `${code} without a status`);
  }
});

test('an answer the service broke off is failed, not upstream-down', () => {
  assert.equal(outcomeOf(gateway(502, 'upstream.failed')), 'failed');
});

test('a caller that left, or an exchange without any status, is failed', () => {
  assert.equal(outcomeOf({ ...service(200), outcome: 'aborted' }), 'failed');
  assert.equal(outcomeOf({ ...gateway(CLIENT_CLOSED), outcome: 'aborted' }), 'failed');
  assert.equal(outcomeOf({ ...gateway(404, 'route.not-found'), outcome: 'aborted' }), 'failed');
  assert.equal(outcomeOf({ ...gateway(504, 'upstream.timeout'), outcome: 'aborted' }), 'failed');
  assert.equal(outcomeOf(gateway(0)), 'failed');
});

function records() {
  const closed: Array<{ status: number; outcome: string }> = [];
  const observer: RecordObserver = { listening: () => true, closed: (r) => closed.push({ status: r.status, outcome: outcomeOf(r) }) };
  return { rr: new RequestRecords([observer], (err) => assert.fail(String(err))), closed };
}

test('close takes the status the caller got when the pipeline set none', () => {
  const { rr, closed } = records();
  const r = rr.open(head)!;
  rr.close(r, false, 404);
  assert.equal(r.status, 404);
  assert.equal(r.outcome, 'answered');
  assert.ok(r.end >= r.start);
  assert.deepEqual(closed, [{ status: 404, outcome: 'refused' }]);
});

test('close keeps the status the pipeline set', () => {
  const { rr } = records();
  const r = rr.open(head)!;
  r.upstreamAnswered = true;
  r.status = 201;
  rr.close(r, false, 201);
  assert.equal(r.status, 201);
  assert.equal(outcomeOf(r), 'ok');
});

test('a caller that left before any status is counted 499', () => {
  const { rr, closed } = records();
  const r = rr.open(head)!;
  rr.close(r, true, 0);
  assert.equal(r.status, CLIENT_CLOSED);
  assert.equal(CLIENT_CLOSED, 499);
  assert.equal(r.outcome, 'aborted');
  assert.deepEqual(closed, [{ status: 499, outcome: 'failed' }]);
  const r2 = rr.open(head)!;
  rr.close(r2, true);
  assert.equal(r2.status, 499);
});

test('a caller that left after its status was sent keeps that status, as a relayed answer does', () => {
  const { rr, closed } = records();
  // The gateway's own answer: the head went out, then the caller left half-way through the body.
  const own = rr.open(head)!;
  rr.close(own, true, 200);
  assert.equal(own.status, 200);
  assert.equal(own.outcome, 'aborted');
  // A relayed answer: the relay set the status as the head went out.
  const relayed = rr.open(head)!;
  relayed.upstreamAnswered = true;
  relayed.status = 200;
  rr.close(relayed, true, 200);
  assert.equal(relayed.status, 200);
  assert.deepEqual(closed, [{ status: 200, outcome: 'failed' }, { status: 200, outcome: 'failed' }]);
});

test('no record without a listening observer; an observer that throws is reported, the others still told', () => {
  assert.equal(new RequestRecords([{ listening: () => false, closed: () => assert.fail('told') }], () => {}).open(head), undefined);
  const errors: unknown[] = [];
  const told: number[] = [];
  const rr = new RequestRecords([
    { listening: () => true, closed: () => { throw new Error('first'); } },
    { listening: () => true, closed: (r) => told.push(r.status) },
    // Not listening when the record opened: it hears nothing of it.
    { listening: () => false, closed: () => assert.fail('an observer that did not listen was told') },
  ], (err) => errors.push(err));
  const r = rr.open(head)!;
  assert.ok(r instanceof RequestRecord);
  rr.close(r, false, 204);
  assert.deepEqual(told, [204]);
  assert.equal(errors.length, 1);
});
